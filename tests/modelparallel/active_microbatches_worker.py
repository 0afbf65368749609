"""Runs under torchrun (2 ranks, pp=2): the same GPT-2 steps with and without SMP's active_microbatches, counting
the microbatches each stage holds between their forward and their backward; writes each rank's findings as JSON.

Run by area_worker.py, which calls rank_results(cases, out_dir) in a launch shared with the other workers.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import torch  # noqa: E402

import sagelaunch.modelparallel as smp  # noqa: E402
from amp_worker import build_model, train_step  # noqa: E402  (a tiny GPT-2 and its causal-LM step)
from models import global_batch  # noqa: E402

STEPS, BATCH, MICROBATCHES = 2, 8, 4


class InFlight:
    """Microbatches whose forward ran on this stage and whose gradient has not come back yet."""

    def __init__(self, module):
        self.live = self.most = 0
        module.register_forward_hook(self._forward)

    def _forward(self, module, args, output):
        out = next(t for t in (output if isinstance(output, tuple) else (output,)) if isinstance(t, torch.Tensor))
        if out.requires_grad:
            self.live += 1
            self.most = max(self.most, self.live)
            out.register_hook(self._backward)

    def _backward(self, grad):
        self.live -= 1


def run(schedule: str, active: int | None) -> dict:
    config = {"ddp": True, "pipeline_parallel_degree": 2, "microbatches": MICROBATCHES, "pipeline": schedule}
    smp.init({**config, **({"active_microbatches": active} if active else {})})
    dmodel = smp.DistributedModel(build_model())
    opt = smp.DistributedOptimizer(torch.optim.AdamW(dmodel.parameters(), lr=1e-2))
    dmodel.partition()  # SMP partitions at the first step; the counter hooks this rank's stage before it
    counter = InFlight(dmodel.pipeline.stage_modules[0])
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        losses.append(train_step(dmodel, global_batch("gpt2", step, BATCH)["x"]).reduce_mean().item())
        opt.step()
        if step == 0:  # the first step also built the stages (a shape-inference forward whose gradient never comes)
            counter.live = counter.most = 0
    return {"losses": losses, "most_in_flight": counter.most, "waves": len(dmodel.pipeline.waves(MICROBATCHES))}


def rank_results(cases: list[dict], out_dir: str) -> dict:
    return {f"{schedule}_{active}": run(schedule, active)
            for schedule in ("simple", "interleaved") for active in (None, 2)}
