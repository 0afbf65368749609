"""Runs under torchrun (2 ranks): smp.DistributedOptimizer with two parameter groups, sharded and not, against a
plain single-process torch reference on the whole batch; writes each rank's findings as JSON.

Run by area_worker.py, which calls rank_results(cases, out_dir) in a launch shared with the other workers.
"""

from __future__ import annotations

import copy
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import sagelaunch.modelparallel as smp  # noqa: E402
from models import build_mlp, global_batch, shard  # noqa: E402

STEPS, BATCH = 3, 8


def param_groups(module):
    """The example's split: weights decay, biases do not and learn faster (per-group options ZeRO must keep)."""
    named = list(module.named_parameters())
    return [{"params": [p for n, p in named if n.endswith("weight")], "weight_decay": 0.1},
            {"params": [p for n, p in named if n.endswith("bias")], "weight_decay": 0.0, "lr": 0.05}]


@smp.step
def train_step(model, x, y):
    loss = F.cross_entropy(model(x), y)
    model.backward(loss)
    return loss, loss.item()


def run(shard_optimizer_state: bool) -> dict:
    smp.init({"ddp": True, "microbatches": 2, "shard_optimizer_state": shard_optimizer_state})
    model = build_mlp(0)
    reference = copy.deepcopy(model)
    dmodel = smp.DistributedModel(model)
    hook_calls = []
    dmodel.register_post_step_hook(lambda m, opt: hook_calls.append((m is dmodel, opt is not None)))
    opt = smp.DistributedOptimizer(torch.optim.AdamW(param_groups(dmodel.get_module()), lr=0.01))
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    ref_opt = torch.optim.AdamW(param_groups(reference), lr=0.01)
    ref_scheduler = torch.optim.lr_scheduler.StepLR(ref_opt, step_size=1, gamma=0.5)
    per_microbatch = []
    for step in range(STEPS):
        batch = global_batch("mlp", step, BATCH)
        local = shard(batch, smp.dp_rank(), smp.dp_size())
        opt.zero_grad()
        _, values = train_step(dmodel, local["x"], local["y"])
        per_microbatch.append(values)
        opt.step()
        scheduler.step()
        ref_opt.zero_grad()
        F.cross_entropy(reference(batch["x"]), batch["y"]).backward()
        ref_opt.step()
        ref_scheduler.step()
    ours, theirs = dict(dmodel.get_module().named_parameters()), dict(reference.named_parameters())
    full_state = sum(v.numel() * v.element_size() for s in ref_opt.state.values() for v in s.values()
                     if isinstance(v, torch.Tensor) and v.dim() > 0)
    local_state = sum(v.numel() * v.element_size() for s in opt.local_optimizer().state.values() for v in s.values()
                      if isinstance(v, torch.Tensor) and v.dim() > 0)
    return {
        "is_optimizer": isinstance(opt, torch.optim.Optimizer),
        "max_param_diff": max((ours[n] - theirs[n]).abs().max().item() for n in theirs),
        "groups": [{"weight_decay": g["weight_decay"], "lr": g["lr"]} for g in opt.param_groups],
        "ref_groups": [{"weight_decay": g["weight_decay"], "lr": g["lr"]} for g in ref_opt.param_groups],
        "local_state_bytes": local_state, "full_state_bytes": full_state,
        "per_microbatch": per_microbatch, "hook_calls": len(hook_calls), "hook_args_ok": all(map(all, hook_calls)),
    }


def rank_results(cases: list[dict], out_dir: str) -> dict:
    return {"sharded": run(True), "unsharded": run(False)}
