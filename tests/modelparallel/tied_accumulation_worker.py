"""Runs under torchrun (2 ranks, pp=2): the BERT example's model, whose MLM decoder on the last stage is tied to the
word embeddings on the first, trained by a loop that accumulates two @smp.step calls per optimizer.step() with the
default backward_passes_per_step=1 (so the tied gradient is summed over the stages after each call). Each rank's
gradients before each optimizer step and its parameters after, with one process's. Run by the area's launch
(area_worker.py).
"""

from __future__ import annotations

import torch
from tree_models import batch, build, loss_of

import sagelaunch.modelparallel as smp

MODEL, WINDOWS, PASSES, BATCH = "example_bert", 2, 2, 4  # optimizer steps, @smp.step calls per step, rows per call


@smp.step
def train_step(model, b):
    loss = loss_of(MODEL, model, b)
    model.backward(loss)
    return loss


def _local(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to_local() if hasattr(tensor, "to_local") else tensor


def pipelined() -> dict:
    smp.init({"pipeline_parallel_degree": 2, "microbatches": 2, "pipeline": "simple", "ddp": True})
    model = smp.DistributedModel(build(MODEL))
    optimizer = smp.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))
    grads = []
    for i in range(WINDOWS * PASSES):
        if i % PASSES == 0:
            optimizer.zero_grad(set_to_none=True)
        train_step(model, batch(MODEL, i, BATCH))
        if i % PASSES == PASSES - 1:
            grads.append({n: _local(p.grad).tolist() for n, p in model.local_named_parameters() if p.grad is not None})
            optimizer.step()
    return {"grads": grads, "params": {n: _local(p).detach().tolist() for n, p in model.local_named_parameters()}}


def one_process() -> dict:
    model = build(MODEL)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    named = dict(model.named_parameters(remove_duplicate=False))  # the decoder's name of the embeddings too
    grads = []
    for i in range(WINDOWS * PASSES):
        if i % PASSES == 0:
            optimizer.zero_grad(set_to_none=True)
        loss_of(MODEL, model, batch(MODEL, i, BATCH)).backward()
        if i % PASSES == PASSES - 1:
            grads.append({n: p.grad.tolist() for n, p in named.items() if p.grad is not None})
            optimizer.step()
    return {"grads": grads, "params": {n: p.detach().tolist() for n, p in named.items()}}


def rank_results(cases: list[dict], out_dir: str) -> dict:
    return {"pipelined": pipelined(), "one_process": one_process()}
