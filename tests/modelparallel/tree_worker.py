"""Runs under torchrun (pp=2, and pp=2 × dp=2 on 4 ranks): module trees without a layer stack (tree_models.py)
pipelined by module; rank 0 also trains one process on the same batches. Writes each rank's findings as JSON.

Run by area_worker.py, which calls rank_results(cases, out_dir) in a launch shared with the other workers.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import sagelaunch.modelparallel as smp  # noqa: E402
from worker_main import against_one_process  # noqa: E402
from tree_models import batch, build, loss_of  # noqa: E402

STEPS, BATCH = 2, 8


@smp.step
def train_step(model, name, b):
    loss = loss_of(name, model, b)
    model.backward(loss)
    return loss


def pipelined(case: dict) -> dict:
    smp.init(case["config"])
    name = case["model"]
    module = build(name, seed=dist.get_rank() if case.get("seed_by_rank") else 0)
    for module_name in case.get("tensor_parallel", []):  # smp.set_tensor_parallelism on these submodules
        smp.set_tensor_parallelism(module.get_submodule(module_name))
    for module_name, index in case.get("partition", {}).items():  # smp.set_partition, auto_partition=False
        smp.set_partition(module.get_submodule(module_name), index)
    model = smp.DistributedModel(module)
    opt = smp.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))
    losses = []
    try:
        for step in range(STEPS):
            opt.zero_grad()
            full = batch(name, step, BATCH)
            own = {k: v.chunk(smp.dp_size())[smp.dp_rank()] for k, v in full.items()}  # this replica's share
            losses.append(train_step(model, name, own).reduce_mean().item())
            opt.step()
    except smp.SMPValidationError as err:
        return {"error": str(err)}
    return {"losses": losses if smp.pp_rank() == smp.pp_size() - 1 else None, "dp_rank": smp.dp_rank(), "tp_rank": smp.tp_rank(), "pp_rank": smp.pp_rank(),
            "params": {n: _local(p).tolist() for n, p in model.local_named_parameters()}}


def _local(param) -> torch.Tensor:
    """This rank's part of a parameter (a tensor-parallel one is a DTensor: its shard)."""
    return param.to_local().detach() if hasattr(param, "to_local") else param.detach()


def one_process(name: str) -> dict:
    model = build(name)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = loss_of(name, model, batch(name, step, BATCH))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    # every name of a tied parameter (the BERT example's decoder is its word embeddings): each stage holds one
    return {"losses": losses,
            "params": {n: p.detach().tolist() for n, p in model.named_parameters(remove_duplicate=False)}}


rank_results = against_one_process(pipelined, one_process)
