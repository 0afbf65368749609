"""Runs under torchrun: a list of model-parallel cases in one launch, results as JSON per rank.

Run by area_worker.py, which calls rank_results(cases, out_dir) in a launch shared with the other workers.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import sagelaunch.modelparallel as smp  # noqa: E402
from sagelaunch.modelparallel.utils import get_distribution_axis  # noqa: E402
from models import BUILDERS, CAUSAL_LMS, global_batch, lm_loss, make_optimizer, shard  # noqa: E402


@smp.step
def mlp_step(model, x, y):
    loss = F.cross_entropy(model(x), y)
    model.backward(loss)
    return loss


@smp.step
def hf_step(model, x, mask, y):
    out = model(x, attention_mask=mask)
    loss = F.cross_entropy(out.logits, y)
    model.backward(loss)
    return loss


@smp.step
def lm_step(model, x):
    loss = lm_loss(model(x).logits, x)
    model.backward(loss)
    return loss


@smp.step
def mlm_step(model, x, mask):
    loss = model(x, attention_mask=mask, labels=x).loss  # the model's own MLM loss (models.forward_loss)
    model.backward(loss)
    return loss


@smp.step
def smp_lm_step(model, x):
    loss = lm_loss(model((x, None, None, None, None)), x)
    model.backward(loss)
    return loss


def run_step(name: str, model, batch):
    if name == "mlp":
        return mlp_step(model, batch["x"], batch["y"])
    if name == "smp_lm":
        return smp_lm_step(model, batch["x"])
    if name in CAUSAL_LMS:
        return lm_step(model, batch["x"])
    if name == "bert_mlm":
        return mlm_step(model, batch["x"], batch["mask"])
    return hf_step(model, batch["x"], batch["mask"], batch["y"])


def tied_aliases(model_name: str) -> dict[str, str]:
    """{other name: first name} of parameters the model ties (GPT-2's lm_head.weight is transformer.wte.weight):
    a pipeline stage may hold a tied parameter under its other name."""
    names: dict[int, list[str]] = {}
    for name, p in BUILDERS[model_name]().named_parameters(remove_duplicate=False):
        names.setdefault(id(p), []).append(name)
    return {alias: group[0] for group in names.values() for alias in group[1:]}


def full_grads(dmodel, aliases: dict[str, str]) -> dict[str, list]:
    from torch.distributed.tensor import DTensor

    out = {}
    for name, p in dmodel.local_named_parameters():
        name = aliases.get(name, name)
        if p.grad is None:
            continue
        # tensor-parallel or FSDP shards; strided ones (GPT-2's fused q|k|v) come back in the original order
        g = p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad
        out[name] = g.detach().cpu().tolist()
    return out


def dp_mean(value: float) -> float:
    t = torch.tensor([value], dtype=torch.float64)
    dist.all_reduce(t, group=smp.get_dp_process_group())
    return float(t.item()) / smp.dp_size()


def build(case: dict, seed: int):
    if case["config"].get("delayed_parameter_initialization") and not case.get("materialised"):
        with smp.delay_param_initialization():
            return build({**case, "config": {}}, seed)
    if case.get("manual_partition"):  # smp.partition contexts around each layer (auto_partition=False)
        reference = BUILDERS[case["model"]](seed)
        module = torch.nn.Sequential()
        for index, layer in zip(case["manual_partition"], reference):
            with smp.partition(index):
                module.append(layer)
        return module
    if case.get("tensor_parallel") == "context":
        with smp.tensor_parallelism():
            return BUILDERS[case["model"]](seed)
    module = BUILDERS[case["model"]](seed)
    if case.get("tensor_parallel"):
        smp.set_tensor_parallelism(module, True)
    return module


@contextlib.contextmanager
def count_saved(box: dict):
    """Bytes of the non-parameter tensors autograd saves for backward while the block runs, as the model's
    own hooks leave them: a checkpointed region or the activation offloader (inner hooks) hides what it keeps."""
    def pack(t):
        if not isinstance(t, torch.nn.Parameter):
            local = getattr(t, "_local_tensor", t)  # a DTensor: its local shard
            box["bytes"] += local.numel() * local.element_size()
            if box.get("in_model"):  # inside smp.DistributedModel.forward (pp: the stages run elsewhere)
                box["model_bytes"] += local.numel() * local.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        yield


def wrap(case: dict, seed: int = 0):
    module = build(case, seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = smp.DistributedModel(module)
    model.wrap_warnings = [f"{w.category.__name__}: {w.message}" for w in caught]
    ckpt = case.get("checkpointing")
    if ckpt:
        target = model.get_module() if case["model"] == "mlp" else model.get_module().roberta.encoder.layer
        smp.set_activation_checkpointing(target, strategy=ckpt)
    opt = smp.DistributedOptimizer(make_optimizer(case.get("optimizer", "sgd"), model.parameters()))
    return model, opt


def train(case: dict, model, opt, steps: range) -> dict:
    losses, grads, saved_bytes, model_bytes, packed_bytes = [], [], [], [], []
    aliases = tied_aliases(case["model"])
    saved = {}
    # what the model itself saves, apart from the step function's loss (which SMP neither checkpoints nor offloads)
    hooks = [model.register_forward_pre_hook(lambda *_: saved.__setitem__("in_model", True)),
             model.register_forward_hook(lambda *_: saved.__setitem__("in_model", False), always_call=True)]
    # prescaled_batch: the tp ranks of a replica read the same batch (sharded by rdp_rank), as SMP documents
    prescaled = case["config"].get("prescaled_batch", False)
    index, count = (smp.rdp_rank(), smp.rdp_size()) if prescaled else (smp.dp_rank(), smp.dp_size())
    for s in steps:
        n = case["local_batch"] * count
        batch = shard(global_batch(case["model"], s, n), index, count)
        opt.zero_grad()
        saved.update(bytes=0, model_bytes=0, in_model=False)
        packed_before = (model.offload_stats or {}).get("packed_bytes", 0)
        with count_saved(saved):
            out = run_step(case["model"], model, batch)
        saved_bytes.append(saved["bytes"])
        model_bytes.append(saved["model_bytes"])
        packed_bytes.append((model.offload_stats or {}).get("packed_bytes", 0) - packed_before)
        losses.append(dp_mean(out.reduce_mean().item()))
        grads.append(full_grads(model, aliases))
        opt.step()
    for h in hooks:
        h.remove()
    return {"losses": losses, "grads": grads, "saved_bytes": max(saved_bytes, default=0),
            "saved_per_step": saved_bytes, "model_saved_per_step": model_bytes, "packed_per_step": packed_bytes}


def case_train(case: dict) -> dict:
    smp.init(case["config"])
    model, opt = wrap(case)
    result = train(case, model, opt, range(case.get("steps", 3)))
    result["layout"] = {"pp": smp.pp_size(), "tp": smp.tp_size(), "dp": smp.dp_size(), "rdp": smp.rdp_size()}
    result["pp_rank"] = smp.pp_rank()
    result["opt_state_bytes"] = opt.local_state_bytes()
    result["distributed_params"] = sorted(n for n, d in model.tp_shard_dims.items() if d is not None)
    full = model.state_dict()  # gathered over tp and pp: the original model's names and shapes
    result["full_state"] = {k: v.tolist() for k, v in full.items()} if smp.rank() == 0 else None
    result["local_params"] = [n for n, _ in model.local_named_parameters()]
    local = {n: getattr(p, "_local_tensor", p) for n, p in model.local_named_parameters()}
    result["local_shapes"] = {n: list(t.shape) for n, t in local.items()}
    result["distribution_axes"] = {n: get_distribution_axis(p) for n, p in model.local_named_parameters()}
    result["local_numel"] = sum(t.numel() for t in {id(t): t for t in local.values()}.values())
    grads = {id(p): getattr(p.grad, "_local_tensor", p.grad) for _, p in model.local_named_parameters()
             if p.grad is not None}
    result["local_grad_numel"] = sum(g.numel() for g in grads.values())  # the last step's, before zero_grad
    result["offload_stats"] = model.offload_stats
    result["wrap_warnings"] = model.wrap_warnings
    full_opt = opt.state_dict()  # gathered over tp, pp and the ZeRO shards: keyed by parameter name
    if smp.rank() == 0:
        result["full_optim_state"] = {name: {k: v.tolist() if isinstance(v, torch.Tensor) else v
                                             for k, v in entry.items()} for name, entry in full_opt["state"].items()}
    if case.get("roundtrip"):
        result["roundtrip"] = roundtrip(case, model, opt, full, full_opt)
    return result


def roundtrip(case: dict, model, opt, full_model: dict, full_opt: dict) -> dict:
    """Load the gathered model and optimizer state_dicts into a fresh model: the next step must be identical."""
    path = os.path.join(case["out_dir"], f"{case['name']}_full.pt")
    smp.save({"model": full_model, "optimizer": full_opt}, path, partial=False)
    smp.barrier()
    first = train(case, model, opt, range(3, 4))
    first_params = _params(model)
    model2, opt2 = wrap(case, seed=123)  # different weights and no optimizer state until loaded
    loaded = smp.load(path, partial=False)
    model2.load_state_dict(loaded["model"])
    opt2.load_state_dict(loaded["optimizer"])
    second = train(case, model2, opt2, range(3, 4))
    return {"losses_equal": first["losses"] == second["losses"], "params_equal": first_params == _params(model2)}


def _params(model) -> dict[str, list]:
    return {k: v.tolist() for k, v in model.local_state_dict().items() if isinstance(v, torch.Tensor)}


def case_resume(case: dict) -> dict:
    """Train 2 steps, save, train 2 more; a fresh model resumed from the checkpoint must repeat them exactly."""
    smp.init(case["config"])
    model, opt = wrap(case, seed=0)
    train(case, model, opt, range(2))
    box = [os.path.join(case["out_dir"], case["name"])]  # under the test's tmp folder
    smp.save_checkpoint(box[0], tag="step2", model=model, optimizer=opt, user_content={"step": 2})
    first = train(case, model, opt, range(2, 4))
    first_params = _params(model)
    model2, opt2 = wrap(case, seed=123)  # different initial weights: only the checkpoint can make them equal
    user = smp.resume_from_checkpoint(box[0])
    second = train(case, model2, opt2, range(2, 4))
    files = sorted(os.listdir(os.path.join(box[0], "step2_partial")))
    params_equal = first_params == _params(model2)
    save_load = save_load_roundtrip(case, model2, opt2)  # trains model2 one more step
    smp.init({"ddp": True})  # another layout: the partial checkpoint must be refused, clearly
    try:
        smp.resume_from_checkpoint(box[0])
        other_layout = None
    except smp.SMPValidationError as err:
        other_layout = str(err)
    return {"other_layout_error": other_layout, "first": first["losses"], "second": second["losses"],
            "user_content": user,
            "params_equal": params_equal, "files": files,
            "newest": open(os.path.join(box[0], "newest")).read(), "save_load": save_load}


def save_load_roundtrip(case: dict, model, opt) -> dict:
    """smp.save/smp.load: partial (one file per pp_rank/tp_rank) and full (rank 0 writes, every rank reads).
    Fresh models loaded from either must hold the same weights and, with the partial optimizer state, take the
    same next step as the model they were saved from."""
    base = os.path.join(case["out_dir"], f"{case['name']}_smp")
    smp.save(model.local_state_dict(), f"{base}_model", partial=True)
    smp.save(opt.local_state_dict(), f"{base}_optimizer", partial=True)
    full = model.state_dict()
    smp.save(full, f"{base}_full.pt", partial=False)
    smp.barrier()
    files = sorted(f for f in os.listdir(case["out_dir"]) if f.startswith(os.path.basename(base)))
    before = _params(model)
    first = train(case, model, opt, range(4, 5))  # smp.step runs the newest DistributedModel: train it first
    partial_model, partial_opt = wrap(case, seed=7)
    partial_model.load_state_dict(smp.load(f"{base}_model", partial=True))
    partial_opt.load_state_dict(smp.load(f"{base}_optimizer", partial=True))
    out = {"files": files, "partial_params_equal": _params(partial_model) == before}
    again = train(case, partial_model, partial_opt, range(4, 5))
    out["next_step_equal"] = first["losses"] == again["losses"] and _params(partial_model) == _params(model)
    full_model, _ = wrap(case, seed=8)
    loaded_full = smp.load(f"{base}_full.pt", partial=False)
    full_model.load_state_dict(loaded_full)
    out["full_params_equal"] = _params(full_model) == before
    out["full_file_equal"] = sorted(loaded_full) == sorted(full) and all(
        torch.equal(loaded_full[k].cpu(), full[k]) for k in full)
    try:
        smp.load(f"{base}_missing", partial=True)
        out["missing_error"] = None
    except smp.SMPValidationError as err:
        out["missing_error"] = str(err)
    return out


def case_layout(case: dict) -> dict:
    out = {}
    for placement in case["placements"]:
        smp.init({**case["config"], "placement_strategy": placement})
        groups = {g: dist.get_process_group_ranks(getattr(smp, f"get_{g}_process_group")())
                  for g in ("pp", "tp", "dp", "mp", "rdp")}
        out[placement] = {"rank": smp.rank(), "pp_rank": smp.pp_rank(), "tp_rank": smp.tp_rank(),
                          "rdp_rank": smp.rdp_rank(), "dp_rank": smp.dp_rank(), "mp_rank": smp.mp_rank(),
                          "groups": groups}
    return out


def case_comm(case: dict) -> dict:
    """SMP's object communication API between real ranks."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        smp.init(case["config"])
    out = {"allgather": smp.allgather({"rank": smp.rank()}, smp.WORLD),
           "init_warnings": [f"{w.category.__name__}: {w.message}" for w in caught]}
    if smp.rank() == 0:
        smp.broadcast({"hello": "all"}, smp.CommGroup.WORLD)
        smp.send([1, 2, 3], 1, smp.RankType.WORLD_RANK)
        out["received"] = smp.recv_from(1, smp.RankType.DP_RANK)
    else:
        out["broadcast"] = smp.recv_from(0, smp.RankType.WORLD_RANK)
        out["sent"] = smp.recv_from(0, smp.RankType.WORLD_RANK)
        smp.send("back", 0, smp.RankType.DP_RANK)
    smp.barrier()
    smp.dp_barrier()
    smp.mp_barrier()
    return out


def case_error(case: dict) -> dict:
    kind = case["kind"]
    smp.init(case["config"])  # the bad-config cases raise here
    if kind == "optimizer_before_wrap":
        module = BUILDERS[case["model"]](0)
        opt = make_optimizer("sgd", module.parameters())
        model = smp.DistributedModel(module)
        smp.DistributedOptimizer(opt)
    elif kind == "bad_model":  # refused while wrapping
        wrap(case)
    elif kind == "bad_batch":
        model, opt = wrap(case)
        n = case["local_batch"] * smp.dp_size()
        run_step(case["model"], model, shard(global_batch(case["model"], 0, n), smp.dp_rank(), smp.dp_size()))
    return {"error": None}


def rank_results(cases: list[dict], out_dir: str) -> dict:
    results = {}
    for case in cases:
        case["out_dir"] = out_dir
        handler = {"train": case_train, "resume": case_resume, "layout": case_layout,
                   "comm": case_comm}.get(case["kind"], case_error)
        try:
            results[case["name"]] = handler(case)
        except Exception as err:  # recorded for the test to compare (the same message on every rank)
            results[case["name"]] = {"error": f"{type(err).__name__}: {err}",
                                     "traceback": traceback.format_exc()[-3000:]}
            if not case["kind"].startswith(("bad", "optimizer")):
                dist.barrier()  # keep the ranks in step after an unexpected failure
    return results
