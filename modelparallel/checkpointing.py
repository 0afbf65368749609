"""Saving and loading with SMP v1's file layout.

smp.save(obj, f, partial=True) → f"{f}_{pp_rank}_{tp_rank}", v3=True (a sharded optimizer state) →
f"{f}_{pp_rank}_{tp_rank}_{rdp_rank}": the suffix goes after the whole name, as transformers' Trainer expects
(it saves "optimizer.pt" and reads back "optimizer.pt" with partial=True). A job whose framework version ships an
SMP release from before tensor parallelism (jobspec.smp.checkpoint_names; the job's environment says which) names
the file as that release did, f"{f}_{mp_rank}" (f"{f}_{mp_rank}_{rdp_rank}" sharded), so that scripts written for it
find and remove their files; smp.load reads either naming. smp.save_checkpoint(path, tag) writes
    path/{tag}_partial/model_{pp}_{tp}.pt, optimizer_{pp}_{tp}[_{rdp}].pt, user_content.pt, smp_config.pt
      (the model_*/optimizer_*.pt names the example's sharded_data_parallel_checkpoint.py reads)
    path/newest                       (one tag per line, the last is the newest)
and for partial=False the gathered model as path/{tag} and user content as path/user_content_{tag}.
"""

from __future__ import annotations

import glob
import os
import shutil
from typing import Any

import torch
import torch.distributed as dist

from sagelaunch.jobspec.contract import SAGELAUNCH_SMP_CHECKPOINT_NAMES
from sagelaunch.jobspec.smp import CHECKPOINT_NAMES
from sagelaunch.modelparallel.core import _require_init, state
from sagelaunch.modelparallel.core.comm import CommGroup, allgather, barrier
from sagelaunch.modelparallel.core.state import PendingCheckpoint
from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.tensor.dtensor_values import full_value, own_part

PARTIAL_KEY = "_smp_is_partial"


# ----- model state
def _local_tensor(t):
    return t.to_local() if hasattr(t, "to_local") else t


def local_model_state(model) -> dict[str, Any]:
    sd = {k: _local_tensor(v).detach().clone() for k, v in model.get_module().state_dict().items()}
    sd[PARTIAL_KEY] = True
    return sd


def full_model_state(model) -> dict[str, Any]:
    """Gather tensor-parallel shards (tp group) and pipeline stages (pp group) into the original model's dict."""
    st = _require_init()
    out: dict[str, Any] = {}
    for name, value in model.get_module().state_dict().items():
        local = full_value(value.detach())  # tensor-parallel and FSDP shards gathered
        out[name] = local.cpu().clone()
    if len(st.layout.groups["pp"]) > 1:
        stages: list[Any] = [None] * len(st.layout.groups["pp"])
        dist.all_gather_object(stages, out, group=st.groups["pp"])
        out = {k: v for stage in stages for k, v in stage.items()}
    return out


def load_model_state(model, state_dict: dict[str, Any], strict: bool = True):
    _require_init()
    sd = dict(state_dict)
    partial = bool(sd.pop(PARTIAL_KEY, False))
    own = model.get_module().state_dict()
    missing = [k for k in own if k not in sd]
    unexpected = [k for k in sd if k not in own] if partial else []
    if strict and (missing or unexpected):
        raise SMPValidationError(
            f"load_state_dict: missing keys {missing[:5]}{'…' if len(missing) > 5 else ''}, unexpected keys "
            f"{unexpected[:5]}; was the checkpoint saved with the same model and parallel layout?"
        )
    with torch.no_grad():
        for name, target in own.items():
            if name not in sd:
                continue
            value = sd[name]
            if not partial:
                value = own_part(value, target)
            _local_tensor(target).copy_(value)
    if state.optimizer is not None and state.optimizer.mixed is not None:  # fp16/bf16: masters follow the model
        state.optimizer.reload_model_params()


# ----- optimizer state
def _param_names(optimizer) -> dict[int, str]:
    """The model's parameter names by id, also for their fp32 masters (fp16/bf16: the optimizer holds those)."""
    names = {id(p): n for n, p in optimizer.model.local_named_parameters()}
    if optimizer.mixed is not None:
        names.update({id(master): names[id(half)] for half, master in optimizer.mixed.pairs()})
    return names


def _optimizer_param(optimizer, p):
    """The tensor the optimizer steps for model parameter p: p itself, or its fp32 master with fp16/bf16."""
    return optimizer.mixed.master_of(p) if optimizer.mixed is not None else p


def full_optimizer_state(optimizer) -> dict[str, Any]:
    """SMP's gathered optimizer state: keyed by the original model's parameter names, with tensor-parallel
    state tensors concatenated (as model.state_dict() does), ZeRO shards merged over the replica group and
    pipeline stages merged over the pp group. Every rank returns the same dict (collective)."""
    st = _require_init()
    model = optimizer.model
    local = optimizer.local_optimizer().state
    mine: dict[str, dict[str, Any]] = {}
    # same parameter order on every tp peer, so the tp all_gathers below pair up
    for name, p in model.local_named_parameters():
        p = _optimizer_param(optimizer, p)
        if p not in local:
            continue
        entry = {}
        for key, value in local[p].items():
            if isinstance(value, torch.Tensor):
                if value.dim() > 0:
                    value = full_value(value.detach())
                value = _local_tensor(value).detach().cpu().clone()
            entry[key] = value
        mine[name] = entry
    names = _param_names(optimizer)
    groups = [{**{k: v for k, v in g.items() if k != "params"}, "params": [names[id(p)] for p in g["params"]]}
              for g in optimizer.param_groups]  # ZeRO's param_groups list every local parameter
    merged, merged_groups = mine, groups
    for group_name, needed in (("rdp" if model.replica_group_name == "rdp" else "dp", optimizer.sharded),
                               ("pp", len(st.layout.groups["pp"]) > 1)):
        if not needed:
            continue
        size = len(st.layout.groups[group_name])
        boxes: list[Any] = [None] * size
        dist.all_gather_object(boxes, (merged, merged_groups), group=st.groups[group_name])
        merged = {k: v for state_part, _ in boxes for k, v in state_part.items()}
        if group_name == "pp":  # each stage lists its own parameters: concatenate group by group
            merged_groups = [{**parts[0], "params": [n for part in parts for n in part["params"]]}
                             for parts in zip(*(g for _, g in boxes))]
    return {PARTIAL_KEY: False, "state": merged, "param_groups": merged_groups}


def load_full_optimizer_state(optimizer, full: dict[str, Any]) -> None:
    """The inverse of full_optimizer_state: this rank's parameters, tp slices, in the optimizer's index order
    (ZeroRedundancyOptimizer.load_state_dict takes the whole indexed dict and keeps its own partition)."""
    st = _require_init()
    names = _param_names(optimizer)
    ordered = [p for g in optimizer.optimizer.param_groups for p in g["params"]]
    missing = [names[id(p)] for p in ordered if names[id(p)] not in full["state"]]
    state: dict[int, dict[str, Any]] = {}
    for index, p in enumerate(ordered):
        name = names[id(p)]
        if name not in full["state"]:
            continue
        entry = {}
        for key, value in full["state"][name].items():
            if isinstance(value, torch.Tensor) and value.dim() > 0:
                value = own_part(value, p)
                value = value.to(st.device)
                if hasattr(p, "device_mesh"):  # a DTensor parameter needs DTensor state
                    from torch.distributed.tensor import DTensor

                    value = DTensor.from_local(value.contiguous(), p.device_mesh, p.placements, run_check=False)
            entry[key] = value
        state[index] = entry
    if missing and state:
        raise SMPValidationError(f"optimizer.load_state_dict: no state for parameters {missing[:5]}; was the state "
                                 "saved from the same model?")
    saved_groups = full["param_groups"]
    if len(saved_groups) != len(optimizer.optimizer.param_groups):
        raise SMPValidationError(f"optimizer.load_state_dict: {len(saved_groups)} saved param groups, the optimizer "
                                 f"has {len(optimizer.optimizer.param_groups)}")
    groups, start = [], 0
    for saved, own in zip(saved_groups, optimizer.optimizer.param_groups):
        count = len(own["params"])
        groups.append({**{k: v for k, v in saved.items() if k != "params"}, "params": list(range(start, start + count))})
        start += count
    optimizer.optimizer.load_state_dict({"state": state, "param_groups": groups})


# ----- files
def _holds_own_shards() -> bool:
    """Sharded data parallelism: every data-parallel rank holds a different shard of the model and optimizer."""
    return bool(getattr(state.model, "sharded_data_parallel", False))


def _naming() -> str:
    naming = os.environ.get(SAGELAUNCH_SMP_CHECKPOINT_NAMES, CHECKPOINT_NAMES[0])
    if naming not in CHECKPOINT_NAMES:
        raise SMPValidationError(f"{SAGELAUNCH_SMP_CHECKPOINT_NAMES}={naming!r} is not a partial-checkpoint naming",
                                 field=SAGELAUNCH_SMP_CHECKPOINT_NAMES, value=naming,
                                 allowed=", ".join(CHECKPOINT_NAMES), fix="unset it or use one of the allowed")
    return naming


def _rank_suffix(v3: bool = False, naming: str | None = None) -> str:
    lay = _require_init().layout
    ranks = f"_{lay.mp_rank}" if (naming or _naming()) == "mp_rank" else f"_{lay.pp_rank}_{lay.tp_rank}"
    return ranks + (f"_{lay.rdp_rank}" if v3 or _holds_own_shards() else "")


def save(obj: Any, f: str, partial: bool = True, v3: bool = False, **kwargs: Any) -> None:
    """torch.save, one file per (pp_rank, tp_rank) when partial (the caller picks which dp ranks save)."""
    if not isinstance(f, str):
        raise SMPValidationError(f"smp.save: f must be a str path, got {type(f).__name__}")
    if partial:
        torch.save(obj, f"{f}{_rank_suffix(v3)}", **kwargs)
    elif _require_init().layout.rank == 0:
        torch.save(obj, f, **kwargs)


def load(f: str, partial: bool = True, **kwargs: Any) -> Any:
    if partial:
        lay = _require_init().layout
        own = _naming()
        # this job's naming first, then the other release's: either one's files are this rank's part
        candidates = [f"{f}{_rank_suffix(v3, naming)}" for naming in (own, *(n for n in CHECKPOINT_NAMES if n != own))
                      for v3 in (True, False)]
        path = next((c for c in candidates if os.path.isfile(c)), None)
        if path is None:
            found = sorted(glob.glob(f"{glob.escape(f)}_*"))
            raise SMPValidationError(
                f"smp.load: no partial checkpoint {candidates[1]} for pp_rank={lay.pp_rank}, tp_rank={lay.tp_rank} "
                f"(mp_rank={lay.mp_rank}); found {found}; was it saved with the same pipeline/tensor parallel degrees?"
            )
        f = path
    kwargs.setdefault("weights_only", False)
    kwargs.setdefault("map_location", state.device)
    return torch.load(f, **kwargs)


def _partial_file(folder: str, stem: str, v3: bool = False) -> str:
    # smp.save_checkpoint's layout (SMP 1.10 and later) has one naming
    return os.path.join(folder, f"{stem}{_rank_suffix(v3, CHECKPOINT_NAMES[0])}.pt")


def _load_partial_file(folder: str, stem: str) -> Any:
    """This rank's model_/optimizer_ file of a save_checkpoint folder (the sharded optimizer's has the rdp rank)."""
    path = next((p for p in (_partial_file(folder, stem, True), _partial_file(folder, stem)) if os.path.isfile(p)),
                None)
    if path is None:
        lay = _require_init().layout
        raise SMPValidationError(
            f"smp.resume_from_checkpoint: no {_partial_file(folder, stem)} for pp_rank={lay.pp_rank}, "
            f"tp_rank={lay.tp_rank}; found {sorted(os.listdir(folder))}; was it saved with the same pipeline/tensor "
            "parallel degrees?")
    return torch.load(path, weights_only=False, map_location=state.device)


def save_checkpoint(path: str, tag: str, partial: bool = True, model=None, optimizer=None, user_content=None,
                    translate_if_full: bool = True, num_kept_partial_checkpoints: int | None = None) -> None:
    st = _require_init()
    if model is None and optimizer is None:
        return
    tags = allgather(tag, CommGroup.WORLD)
    if not isinstance(tag, str) or len(set(tags)) != 1:
        raise SMPValidationError(f"smp.save_checkpoint: tag must be the same str on every rank, got {tags}")
    lay = st.layout
    folder = os.path.join(path, f"{tag}_partial") if partial else path
    os.makedirs(folder, exist_ok=True)
    barrier()
    if model is not None:
        if partial:
            if lay.rdp_rank == 0 or _holds_own_shards():
                torch.save(model.local_state_dict(), _partial_file(folder, "model"))
        elif lay.rdp_rank == 0:
            full = model.state_dict()
            full[PARTIAL_KEY] = False
            save(full, os.path.join(path, tag), partial=False)
    if optimizer is not None and partial:
        if optimizer.sharded or lay.rdp_rank == 0 or _holds_own_shards():
            torch.save(optimizer.local_state_dict(), _partial_file(folder, "optimizer", v3=optimizer.sharded))
    if user_content is not None:
        target = os.path.join(folder, "user_content.pt") if partial else os.path.join(path, f"user_content_{tag}")
        save(user_content, target, partial=False)
    if partial:
        save(st.cfg.model_dump(), os.path.join(folder, "smp_config.pt"), partial=False)
    if lay.rank == 0 and partial:
        newest = os.path.join(path, "newest")
        existing = open(newest).read().splitlines() if os.path.isfile(newest) else []
        existing = [t for t in existing if t != f"{tag}_partial"] + [f"{tag}_partial"]
        if num_kept_partial_checkpoints and num_kept_partial_checkpoints > 0:
            while len(existing) > num_kept_partial_checkpoints:
                shutil.rmtree(os.path.join(path, existing.pop(0)), ignore_errors=True)
        with open(newest, "w") as fd:
            fd.write("".join(f"{t}\n" for t in existing))
    barrier()


def resume_from_checkpoint(path: str, tag: str | None = None, partial: bool = True, strict: bool = True,
                           load_optimizer: bool = True, load_sharded_optimizer_state: bool = True,
                           translate_function=None) -> Any:
    st = _require_init()
    if tag is None:
        if not partial:
            raise SMPValidationError("smp.resume_from_checkpoint: tag is required to load a full checkpoint")
        newest = os.path.join(path, "newest")
        if not os.path.isfile(newest):
            raise SMPValidationError(f"smp.resume_from_checkpoint: no {newest}; pass tag= explicitly")
        folder_tag = open(newest).read().splitlines()[-1]
    else:
        folder_tag = f"{tag}_partial" if partial else tag
    target = os.path.join(path, folder_tag)
    if not os.path.exists(target):
        raise SMPValidationError(f"smp.resume_from_checkpoint: checkpoint {target} does not exist")
    if partial:
        _verify_layout(os.path.join(target, "smp_config.pt"), st.cfg, load_optimizer)
    st.pending_checkpoint = PendingCheckpoint(target, partial, strict, model=True,
                                              optimizer=bool(load_optimizer and partial))
    if st.model is not None:
        _load_pending_model(st.model)
    if st.optimizer is not None:
        _load_pending_optimizer(st.optimizer)
    if partial:
        uc = os.path.join(target, "user_content.pt")
    else:
        uc = os.path.join(path, f"user_content_{tag}")
    return load(uc, partial=False) if os.path.isfile(uc) else None


# what the model files depend on, then what the optimizer files also depend on
LAYOUT_KEYS = ("pipeline_parallel_degree", "tensor_parallel_degree", "sharded_data_parallel_degree",
               "shard_optimizer_state")


def _verify_layout(config_file: str, cfg, load_optimizer: bool) -> None:
    """A partial checkpoint holds one file per (pp_rank, tp_rank): it loads only into the same layout."""
    if not os.path.isfile(config_file):
        return
    saved = torch.load(config_file, weights_only=False)
    keys = LAYOUT_KEYS if load_optimizer else LAYOUT_KEYS[:3]
    changed = [f"{k}: saved {saved.get(k)!r}, now {getattr(cfg, k)!r}" for k in keys if saved.get(k) != getattr(cfg, k)]
    if changed:
        raise SMPValidationError(
            "smp.resume_from_checkpoint: a partial checkpoint loads only with the layout it was saved with ("
            + "; ".join(changed) + "); use the same mp_parameters, or save a full checkpoint (partial=False)"
        )


def _load_pending_model(model) -> None:
    pending = state.pending_checkpoint
    if pending and pending.model and model.partitioned:  # else at partition time (the first @smp.step)
        target = pending.target
        sd = _load_partial_file(target, "model") if pending.partial else load(target, partial=False)
        load_model_state(model, sd, pending.strict)
        pending.model = False
    _clear_if_done()


def _load_pending_optimizer(optimizer) -> None:
    pending = state.pending_checkpoint
    if pending and pending.optimizer and optimizer.model.partitioned:  # else at partition time
        optimizer.load_state_dict(_load_partial_file(pending.target, "optimizer"))
        pending.optimizer = False
    _clear_if_done()


def _clear_if_done() -> None:
    pending = state.pending_checkpoint
    if pending and not pending.model and not pending.optimizer:
        state.pending_checkpoint = None
