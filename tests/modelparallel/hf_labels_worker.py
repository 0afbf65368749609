"""Runs under torchrun (2 ranks, pp=2): Hugging Face models pipelined and called as HF training loops call them,
`model(input_ids=..., attention_mask=..., labels=...)` with the loss from the model's own output; rank 0 also runs
one process on the same batches. Writes each rank's findings as JSON.

Run by area_worker.py, which calls rank_results(cases, out_dir) in a launch shared with the other workers.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))


import sagelaunch.modelparallel as smp  # noqa: E402
from worker_main import against_one_process  # noqa: E402
from models import BUILDERS, CAUSAL_LMS, global_batch, make_optimizer  # noqa: E402

STEPS, BATCH = 2, 4


def keyword_inputs(model_name: str, batch: dict) -> dict:
    if model_name in CAUSAL_LMS:
        return {"input_ids": batch["x"], "labels": batch["x"]}
    return {"input_ids": batch["x"], "attention_mask": batch["mask"], "labels": batch["y"]}


@smp.step
def train_step(model, inputs):
    loss = model(**inputs).loss
    model.backward(loss)
    return loss


def pipelined(model_name: str, schedule: str, microbatches: int) -> dict:
    smp.init({"pipeline_parallel_degree": 2, "microbatches": microbatches, "pipeline": schedule, "ddp": True})
    model = smp.DistributedModel(BUILDERS[model_name](0))
    opt = smp.DistributedOptimizer(make_optimizer("sgd", model.parameters()))
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        out = train_step(model, keyword_inputs(model_name, global_batch(model_name, step, BATCH)))
        losses.append(out.reduce_mean().item() if smp.pp_rank() == smp.pp_size() - 1 else None)
        opt.step()
    params = {n: p.detach().tolist() for n, p in model.local_named_parameters()}
    return {"losses": losses, "params": params}


def one_process(model_name: str) -> dict:
    model = BUILDERS[model_name](0)
    opt = make_optimizer("sgd", model.parameters())
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = model(**keyword_inputs(model_name, global_batch(model_name, step, BATCH))).loss
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "params": {n: p.detach().tolist() for n, p in model.named_parameters()}}


rank_results = against_one_process(lambda case: pipelined(case["model"], case["schedule"], case["microbatches"]),
                                   one_process)
