"""Runs under torchrun (2 ranks, dp=2, gloo): SMP v1's gradient accumulation with backward_passes_per_step=N in 1
and 2 — two @smp.step calls per optimizer.step(), as the GPT-2 example's --gradient_accumulation loop — counting
the all-reduces DDP really runs (a comm hook on the wrapped DDP). Run by the area's launch (area_worker.py).
"""

from __future__ import annotations

import torch
import torch.nn as nn
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

import sagelaunch.modelparallel as smp

WINDOWS, PASSES, BATCH = 2, 2, 8  # optimizer steps, @smp.step calls per optimizer step, global batch per call


def batches() -> list[tuple[torch.Tensor, torch.Tensor]]:
    g = torch.Generator().manual_seed(1)
    return [(torch.randn(BATCH, 4, generator=g), torch.randn(BATCH, 3, generator=g)) for _ in range(WINDOWS * PASSES)]


def fresh_model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))


@smp.step
def train_step(model, x, y):
    loss = nn.functional.mse_loss(model(x), y)
    model.backward(loss)
    return loss


def smp_run(passes_per_step: int) -> dict:
    model = smp.DistributedModel(fresh_model(), trace_device="gpu", backward_passes_per_step=passes_per_step)
    optimizer = smp.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))
    allreduces = []

    def counting_hook(process_group, bucket):
        allreduces.append(bucket.index())
        return allreduce_hook(process_group, bucket)

    (ddp,) = model.ddp_modules
    ddp.register_comm_hook(None, counting_hook)
    half, rank = BATCH // 2, smp.dp_rank()
    grads = []
    for i, (x, y) in enumerate(batches()):
        if i % PASSES == 0:
            optimizer.zero_grad(set_to_none=True)
        train_step(model, x[rank * half:(rank + 1) * half], y[rank * half:(rank + 1) * half])
        if i % PASSES == PASSES - 1:
            grads.append([p.grad.tolist() for p in model.parameters()])
            optimizer.step()
    return {"allreduces": len(allreduces), "grads": grads, "params": [p.tolist() for p in model.parameters()]}


def one_process() -> dict:
    """The same accumulation in one process on the whole batch (the reference data parallelism must equal)."""
    model = fresh_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    grads = []
    for i, (x, y) in enumerate(batches()):
        if i % PASSES == 0:
            optimizer.zero_grad(set_to_none=True)
        nn.functional.mse_loss(model(x), y).backward()
        if i % PASSES == PASSES - 1:
            grads.append([p.grad.tolist() for p in model.parameters()])
            optimizer.step()
    return {"grads": grads, "params": [p.tolist() for p in model.parameters()]}


def rank_results(cases: list[dict], out_dir: str) -> dict:
    smp.init({"ddp": True, "microbatches": 2})
    return {"n1": smp_run(1), "n2": smp_run(PASSES), "one_process": one_process()}
