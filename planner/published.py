"""A published run as the planner predicts it: the achieved FLOP/s per GPU it predicts, and the efficiency
constant that makes one run's prediction equal its published figure (scripts/fit_planner_efficiency.py)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.planner.hardware import Hardware
from sagelaunch.planner.layout import Layout, check_batch, check_layout
from sagelaunch.planner.memory import stage_numel
from sagelaunch.planner.models import model_from_dims
from sagelaunch.planner.speed import flops_per_step, predict


class PublishedRun(BaseModel):
    model_config = ConfigDict(frozen=True)

    hidden: int
    heads: int
    layers: int
    tp: int
    pp: int
    gpus: int
    batch: int
    tflops_per_gpu: float  # as published: the run's FLOPs (recompute included) per second per GPU
    vocab: int
    seq_len: int


def predicted_tflops(run: PublishedRun, hw: Hardware, efficiency: float) -> float:
    """Microbatches of one sequence (the paper's pipeline runs), the non-interleaved schedule, recompute on."""
    shape = model_from_dims("gpt2", layers=run.layers, hidden=run.hidden, heads=run.heads, vocab=run.vocab,
                            seq_len=run.seq_len)
    replicas = run.gpus // (run.tp * run.pp)
    layout = Layout(tp=run.tp, pp=run.pp, microbatches=run.batch // replicas, activation_checkpointing=True,
                    precision="fp16", pipeline="simple")
    world = check_layout(layout, run.gpus, hw.gpus_per_instance)
    micro = check_batch(run.batch, layout, world)
    speed = predict(shape, layout, world, hw, efficiency, run.batch, micro, run.seq_len, stage_numel(shape, layout))
    if speed is None:
        raise SagelaunchError(f"{hw.instance_type} lacks the peak FLOP/s or a bandwidth the prediction needs",
                              field="hw", value=hw.instance_type, allowed="hardware with peak FLOP/s and bandwidths",
                              fix="give the missing figures (Hardware.model_copy(update=...))")
    _, hardware_flops = flops_per_step(shape, run.batch, run.seq_len, recompute=True)
    return hardware_flops / speed.step_seconds / run.gpus / 1e12


def fit_efficiency(run: PublishedRun, hw: Hardware) -> float:
    """The efficiency under which the prediction of `run` is its published figure (bisection: the prediction grows
    with the efficiency)."""
    low, high = 1e-3, 1.0
    for _ in range(60):
        mid = (low + high) / 2
        if predicted_tflops(run, hw, mid) < run.tflops_per_gpu:
            low = mid
        else:
            high = mid
    return (low + high) / 2
