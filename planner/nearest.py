"""The nearest layouts that fit, for a layout that does not: each single change (optimizer-state sharding,
activation checkpointing, a larger pipeline, tensor or sharded-data-parallel degree, more microbatches) at the
smallest value whose whole plan — activations included, not only the model states `smallest_changes` bounds —
is no longer "does not fit"."""

from __future__ import annotations

from collections.abc import Iterator

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.planner.hardware import hardware
from sagelaunch.planner.layout import Layout
from sagelaunch.planner.memory import Device, Runtime
from sagelaunch.planner.plan import Plan, plan
from sagelaunch.planner.shape import ModelShape


def _candidates(layout: Layout, world: int, gpus_per_instance: int, layers: int,
                global_batch: int) -> Iterator[tuple[str, list[tuple[str, Layout]]]]:
    """Per kind of change, its values from the smallest up."""
    if not layout.shard_optimizer_state and layout.sdp == 1:
        yield "sop", [("shard_optimizer_state=True", layout.model_copy(update={"shard_optimizer_state": True}))]
    if not layout.activation_checkpointing:
        yield "ckpt", [("activation_checkpointing=True",
                        layout.model_copy(update={"activation_checkpointing": True}))]
    yield "pp", [(f"pipeline_parallel_degree={d}", layout.model_copy(update={"pp": d}))
                 for d in range(layout.pp + 1, min(world, layers) + 1)]
    yield "tp", [(f"tensor_parallel_degree={d}", layout.model_copy(update={"tp": d}))
                 for d in range(layout.tp + 1, gpus_per_instance + 1)]
    if layout.tp == 1 and layout.pp == 1 and not layout.shard_optimizer_state:
        yield "sdp", [(f"sharded_data_parallel_degree={d}", layout.model_copy(update={"sdp": d}))
                      for d in range(max(2, layout.sdp + 1), world + 1)]
    more = [m for m in range(layout.microbatches + 1, global_batch + 1) if global_batch % m == 0]
    yield "microbatches", [(f"microbatches={m}", layout.model_copy(update={"microbatches": m})) for m in more]


def changes_that_fit(shape: ModelShape, layout: Layout, instance_type: str, instance_count: int,
                     global_batch: int, seq_len: int | None = None, runtime: Runtime | None = None,
                     device: Device = "cuda") -> list[tuple[str, Plan]]:
    """Each kind of single change at its smallest value that fits (or is tight), with its plan, fastest first
    where the speed is known."""
    hw = hardware(instance_type)
    world = instance_count * hw.gpus_per_instance
    found: list[tuple[str, Plan]] = []
    for _, values in _candidates(layout, world, hw.gpus_per_instance, shape.layers, global_batch):
        for text, candidate in values:
            try:
                result = plan(shape, candidate, instance_type, instance_count, global_batch, seq_len=seq_len,
                              runtime=runtime, hw=hw, device=device)
            except SagelaunchError:
                continue  # this value does not divide the world, the model or the batch
            if result.verdict.status != "does not fit":
                found.append((text, result))
                break
    return sorted(found, key=lambda item: item[1].speed.step_seconds if item[1].speed else float("inf"))
