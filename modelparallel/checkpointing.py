"""Saving and loading with SMP v1's file layout.

smp.save(obj, f, partial=True) → f"{f}_{pp_rank}_{tp_rank}.pt" (with shard_optimizer_state the optimizer uses
f"{f}_{pp_rank}_{tp_rank}_{rdp_rank}.pt"). smp.save_checkpoint(path, tag) writes
    path/{tag}_partial/model_{pp}_{tp}.pt, optimizer_states_{pp}_{tp}[_{rdp}].pt, user_content.pt, smp_config.pt
    path/newest                       (one tag per line, the last is the newest)
and for partial=False the gathered model as path/{tag} and user content as path/user_content_{tag}.
"""

from __future__ import annotations

import glob
import os
from typing import Any

import torch
import torch.distributed as dist

from modelparallel.core import _require_init, state
from modelparallel.errors import SMPValidationError

PARTIAL_KEY = "_smp_is_partial"


# ----- model state
def _local_tensor(t):
    return t.to_local() if hasattr(t, "to_local") else t


def local_model_state(model) -> dict[str, Any]:
    sd = {k: _local_tensor(v).detach().clone() for k, v in model.module.state_dict().items()}
    sd[PARTIAL_KEY] = True
    return sd


def full_model_state(model) -> dict[str, Any]:
    """Gather tensor-parallel shards (tp group) and pipeline stages (pp group) into the original model's dict."""
    st = _require_init()
    tp_size = len(st.layout.groups["tp"])
    out: dict[str, Any] = {}
    for name, value in model.module.state_dict().items():
        local = _local_tensor(value).detach()
        dim = model.tp_shard_dims.get(name)
        if dim is not None and tp_size > 1:
            parts = [torch.empty_like(local) for _ in range(tp_size)]
            dist.all_gather(parts, local.contiguous(), group=st.groups["tp"])
            local = torch.cat(parts, dim=dim)
        out[name] = local.cpu().clone()
    if len(st.layout.groups["pp"]) > 1:
        stages: list[Any] = [None] * len(st.layout.groups["pp"])
        dist.all_gather_object(stages, out, group=st.groups["pp"])
        out = {k: v for stage in stages for k, v in stage.items()}
    return out


def load_model_state(model, state_dict: dict[str, Any], strict: bool = True):
    st = _require_init()
    sd = dict(state_dict)
    partial = bool(sd.pop(PARTIAL_KEY, False))
    own = model.module.state_dict()
    missing = [k for k in own if k not in sd]
    unexpected = [k for k in sd if k not in own] if partial else []
    if strict and (missing or unexpected):
        raise SMPValidationError(
            f"load_state_dict: missing keys {missing[:5]}{'…' if len(missing) > 5 else ''}, unexpected keys "
            f"{unexpected[:5]}; was the checkpoint saved with the same model and parallel layout?"
        )
    tp_size, tp_rank = len(st.layout.groups["tp"]), st.layout.tp_rank
    with torch.no_grad():
        for name, target in own.items():
            if name not in sd:
                continue
            value = sd[name]
            dim = model.tp_shard_dims.get(name)
            if not partial and dim is not None and tp_size > 1:
                value = value.chunk(tp_size, dim=dim)[tp_rank]
            _local_tensor(target).copy_(value)


# ----- optimizer state
def full_optimizer_state(optimizer) -> dict[str, Any]:
    from modelparallel.comm import CommGroup, allgather

    if optimizer.sharded:
        raise SMPValidationError("with shard_optimizer_state=True only the partial optimizer state can be saved; "
                                 "use optimizer.local_state_dict() / smp.save_checkpoint(partial=True)")
    return {PARTIAL_KEY: False, "mp_rank_states": allgather(optimizer.local_state_dict(), CommGroup.MP_GROUP)}


# ----- files
def _rank_suffix(v3: bool = False) -> str:
    lay = _require_init().layout
    return f"_{lay.pp_rank}_{lay.tp_rank}" + (f"_{lay.rdp_rank}" if v3 else "")


def save(obj: Any, f: str, partial: bool = True, v3: bool = False, **kwargs: Any) -> None:
    """torch.save, one file per (pp_rank, tp_rank) when partial (the caller picks which dp ranks save)."""
    if not isinstance(f, str):
        raise SMPValidationError(f"smp.save: f must be a str path, got {type(f).__name__}")
    if partial:
        torch.save(obj, f"{f}{_rank_suffix(v3)}.pt", **kwargs)
    elif _require_init().layout.rank == 0:
        torch.save(obj, f, **kwargs)


def load(f: str, partial: bool = True, **kwargs: Any) -> Any:
    if partial:
        lay = _require_init().layout
        v3 = f"{f}{_rank_suffix(True)}.pt"
        path = v3 if os.path.isfile(v3) else f"{f}{_rank_suffix()}.pt"
        if not os.path.isfile(path):
            found = sorted(glob.glob(f"{f}_*.pt"))
            raise SMPValidationError(
                f"smp.load: no partial checkpoint {path} for pp_rank={lay.pp_rank}, tp_rank={lay.tp_rank}; found "
                f"{found}; was it saved with the same pipeline/tensor parallel degrees?"
            )
        f = path
    kwargs.setdefault("weights_only", False)
    kwargs.setdefault("map_location", state.device)
    return torch.load(f, **kwargs)


def save_checkpoint(path: str, tag: str, partial: bool = True, model=None, optimizer=None, user_content=None,
                    translate_if_full: bool = True, num_kept_partial_checkpoints: int | None = None) -> None:
    import shutil

    from modelparallel.comm import CommGroup, allgather, barrier

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
            if lay.rdp_rank == 0:
                save(model.local_state_dict(), os.path.join(folder, "model"), partial=True)
        elif lay.rdp_rank == 0:
            full = model.state_dict()
            full[PARTIAL_KEY] = False
            save(full, os.path.join(path, tag), partial=False)
    if optimizer is not None and partial:
        if optimizer.sharded or lay.rdp_rank == 0:
            save(optimizer.local_state_dict(), os.path.join(folder, "optimizer_states"), partial=True,
                 v3=optimizer.sharded)
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
    st.pending_checkpoint = {"target": target, "partial": partial, "strict": strict,
                             "model": True, "optimizer": bool(load_optimizer and partial)}
    if st.model is not None:
        _load_pending_model(st.model)
    if st.optimizer is not None:
        _load_pending_optimizer(st.optimizer)
    if partial:
        uc = os.path.join(target, "user_content.pt")
    else:
        uc = os.path.join(path, f"user_content_{tag}")
    return load(uc, partial=False) if os.path.isfile(uc) else None


LAYOUT_KEYS = ("pipeline_parallel_degree", "tensor_parallel_degree", "shard_optimizer_state")


def _verify_layout(config_file: str, cfg, load_optimizer: bool) -> None:
    """A partial checkpoint holds one file per (pp_rank, tp_rank): it loads only into the same layout."""
    if not os.path.isfile(config_file):
        return
    saved = torch.load(config_file, weights_only=False)
    keys = LAYOUT_KEYS if load_optimizer else LAYOUT_KEYS[:2]
    changed = [f"{k}: saved {saved.get(k)!r}, now {getattr(cfg, k)!r}" for k in keys if saved.get(k) != getattr(cfg, k)]
    if changed:
        raise SMPValidationError(
            "smp.resume_from_checkpoint: a partial checkpoint loads only with the layout it was saved with ("
            + "; ".join(changed) + "); use the same mp_parameters, or save a full checkpoint (partial=False)"
        )


def _load_pending_model(model) -> None:
    pending = state.pending_checkpoint
    if pending and pending["model"]:
        target = pending["target"]
        sd = load(os.path.join(target, "model"), partial=True) if pending["partial"] else load(target, partial=False)
        load_model_state(model, sd, pending["strict"])
        pending["model"] = False
    _clear_if_done()


def _load_pending_optimizer(optimizer) -> None:
    pending = state.pending_checkpoint
    if pending and pending["optimizer"]:
        optimizer.load_state_dict(load(os.path.join(pending["target"], "optimizer_states"), partial=True))
        pending["optimizer"] = False
    _clear_if_done()


def _clear_if_done() -> None:
    pending = state.pending_checkpoint
    if pending and not pending["model"] and not pending["optimizer"]:
        state.pending_checkpoint = None
