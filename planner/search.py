"""search(): every layout of a model on an instance type and count, the ones that fit ranked fastest first, and
why the best beats the next.

Enumerated: tensor degrees that divide the GPUs of one instance and the model's heads/FFN, pipeline degrees that
divide what is left (at most one layer per stage), sharded data parallelism (without tp/pp, as SMP requires),
optimizer-state sharding, activation checkpointing and offloading, and microbatch counts that divide a replica's
batch. Memory is evaluated on the first and last pipeline stage, the most loaded (memory.stage_memory only_ends).
"""

from __future__ import annotations

import itertools

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.planner.hardware import Hardware, efficiency, hardware
from sagelaunch.planner.layout import Layout, Precision, check_batch, check_layout
from sagelaunch.planner.memory import MemoryBreakdown, Runtime, stage_memory, stage_numel
from sagelaunch.planner.plan import Status, verdict_of
from sagelaunch.planner.shape import ModelShape
from sagelaunch.planner.speed import Speed, predict

MAX_MICROBATCHES = 64


class Ranked(BaseModel):
    model_config = ConfigDict(frozen=True)

    layout: Layout
    status: Status
    memory: MemoryBreakdown  # the most loaded rank
    speed: Speed | None


class SearchResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    instance_type: str
    instance_count: int
    global_batch: int
    seq_len: int
    considered: int
    rows: tuple[Ranked, ...]  # fits and tight ones, best first
    why: str  # why the best beats the next


def _divisors(n: int, limit: int) -> list[int]:
    return [d for d in range(1, min(n, limit) + 1) if n % d == 0]


def candidates(shape: ModelShape, hw: Hardware, instance_count: int, global_batch: int,
               precision: Precision) -> list[Layout]:
    world = hw.gpus_per_instance * instance_count
    out = []
    for tp in _divisors(hw.gpus_per_instance, hw.gpus_per_instance):
        for pp in _divisors(world // tp, shape.layers):
            rdp = world // (tp * pp)
            if global_batch % rdp:
                continue
            sdps = [1] + ([d for d in _divisors(world, world) if d > 1] if tp == pp == 1 else [])
            for sdp, zero, ckpt, offload in itertools.product(sdps, (False, True), (False, True), (False, True)):
                if (sdp > 1 and zero) or (zero and rdp == 1) or (offload and not ckpt):
                    continue
                per_replica = global_batch // (world if sdp > 1 else rdp)
                for mb in _divisors(per_replica, MAX_MICROBATCHES):
                    if pp > 1 and mb < pp:
                        continue  # fewer microbatches than stages leaves stages idle
                    out.append(Layout(tp=tp, pp=pp, sdp=sdp, shard_optimizer_state=zero, activation_checkpointing=ckpt,
                                      offload_activations=offload, microbatches=mb, precision=precision))
    return out


def _key(row: Ranked) -> tuple[float, float]:
    step = row.speed.step_seconds if row.speed else float("inf")
    return (step, row.memory.share)


def search(shape: ModelShape, instance_type: str, instance_count: int, global_batch: int, seq_len: int | None = None,
           precision: Precision = "bf16", runtime: Runtime = "smp", hw: Hardware | None = None,
           top: int = 20) -> SearchResult:
    hw = hw or hardware(instance_type)
    seq = seq_len or shape.seq_len
    eff = efficiency(hw.accelerator)
    layouts = candidates(shape, hw, instance_count, global_batch, precision)
    rows: list[Ranked] = []
    for layout in layouts:
        try:
            world = check_layout(layout, hw.gpus_per_instance * instance_count, hw.gpus_per_instance)
            micro = check_batch(global_batch, layout, world)
            stages = stage_memory(shape, layout, world, micro, seq, hw.memory_bytes, runtime, only_ends=True)
        except SagelaunchError:
            continue  # the degree does not divide the model (heads, FFN) or the world
        worst = max(stages, key=lambda s: s.total)
        verdict = verdict_of(worst)
        if verdict.status == "does not fit":
            continue
        speed = None
        if eff is not None:
            speed = predict(shape, layout, world, hw, eff.value, global_batch, micro, seq,
                            stage_numel(shape, layout))
        rows.append(Ranked(layout=layout, status=verdict.status, memory=worst, speed=speed))
    rows.sort(key=_key)
    return SearchResult(instance_type=instance_type, instance_count=instance_count, global_batch=global_batch,
                        seq_len=seq, considered=len(layouts), rows=tuple(rows[:top]), why=why_best(rows))


def why_best(rows: list[Ranked]) -> str:
    if not rows:
        return "no layout fits"
    if len(rows) == 1:
        return f"{rows[0].layout.label()} is the only layout that fits"
    best, nxt = rows[0], rows[1]
    a, b = best.speed, nxt.speed
    if a is None or b is None:
        return (f"{best.layout.label()} uses the least memory ({best.memory.share:.0%} vs {nxt.memory.share:.0%}); "
                "speed unknown")
    parts = []
    for name, x, y in (("compute", a.compute_seconds, b.compute_seconds),
                       ("pipeline bubble", a.bubble_share, b.bubble_share),
                       ("tensor-parallel communication", a.tp_comm_seconds, b.tp_comm_seconds),
                       ("exposed data-parallel communication", a.dp_comm_exposed_seconds,
                        b.dp_comm_exposed_seconds)):
        if abs(x - y) > 1e-3 * max(a.step_seconds, 1e-9):
            shown = (f"{x:.1%} vs {y:.1%}" if name == "pipeline bubble" else f"{x:.3f} s vs {y:.3f} s")
            parts.append(f"{name} {shown}")
    gib = 2**30
    memory = (f"{best.memory.total / gib:.1f} vs {nxt.memory.total / gib:.1f} GiB on the most loaded GPU")
    reason = "; ".join(parts) if parts else f"the same predicted step, less memory: {memory}"
    return (f"{best.layout.label()} ({a.step_seconds:.3f} s/step) beats {nxt.layout.label()} "
            f"({b.step_seconds:.3f} s/step): {reason}")
