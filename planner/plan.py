"""plan(): one layout's memory per GPU, verdict, speed and cost; the smallest single change that makes a layout
that does not fit, fit."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.accelerators import training_price
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.planner.hardware import Hardware, efficiency, hardware
from sagelaunch.planner.layout import Layout, World, check_batch, check_layout
from sagelaunch.planner.memory import Device, MemoryBreakdown, Runtime, stage_memory, stage_numel
from sagelaunch.planner.shape import ModelShape
from sagelaunch.planner.speed import Speed, predict

TIGHT = 0.85  # above this share of a GPU's memory a layout is "tight": allocator fragmentation can tip it over
Status = Literal["fits", "tight", "does not fit"]
TERM_NAMES = {"parameters": "parameters", "gradients": "gradients", "optimizer_state": "optimizer state",
              "master_weights": "fp32 master weights", "master_gradients": "fp32 master gradients",
              "activations": "activations", "communication": "communication buffers",
              "transient": "transient (loss gradient / optimizer temporaries)", "allocator": "allocator overhead"}


class Verdict(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: Status
    share: float  # of the GPU's memory, on the most loaded rank
    largest_term: str
    message: str


class Cost(BaseModel):
    model_config = ConfigDict(frozen=True)

    usd_per_hour: float
    usd_per_1000_steps: float | None
    usd_per_billion_tokens: float | None
    source: str


class Plan(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    parameters: int
    instance_type: str
    accelerator: str
    instance_count: int
    world_size: int
    global_batch: int
    micro_batch: int
    seq_len: int
    runtime: Runtime
    layout: Layout
    stages: tuple[MemoryBreakdown, ...]
    most_loaded: MemoryBreakdown
    verdict: Verdict
    speed: Speed | None
    speed_note: str
    cost: Cost | None
    cost_note: str


def verdict_of(m: MemoryBreakdown) -> Verdict:
    terms = m.terms()
    largest = max(terms, key=lambda k: terms[k])
    share = m.share
    status: Status = "does not fit" if share > 1 else "tight" if share > TIGHT else "fits"
    gib = 2**30
    moment = {"forward_backward": "forward/backward", "layer_backward": "backward",
              "step": "the optimizer step"}[m.peak_phase]
    text = (f"{m.total / gib:.1f} GiB of {m.capacity / gib:.0f} GiB ({share:.0%}) on pipeline stage {m.stage} at "
            f"{moment}; largest term: {TERM_NAMES[largest]} {terms[largest] / gib:.1f} GiB")
    return Verdict(status=status, share=share, largest_term=largest, message=f"{status}: {text}")


def model_label(shape: ModelShape) -> str:
    return (f"{shape.family} {shape.parameters / 1e9:.2f}B (L{shape.layers} h{shape.hidden} a{shape.heads} "
            f"ffn{shape.ffn} V{shape.vocab})")


def _cost(hw: Hardware, count: int, region: str | None, speed: Speed | None,
          seq: int, batch: int, price_per_hour: float | None = None) -> tuple[Cost | None, str]:
    if price_per_hour is not None:  # the caller's own figure (a negotiated or current price) wins over the catalog
        if not price_per_hour > 0:
            raise SagelaunchError(f"price_per_hour={price_per_hour} must be a positive number of US dollars",
                                  field="price_per_hour", value=price_per_hour, allowed="> 0 (USD per instance-hour)",
                                  fix="give the on-demand price of one instance per hour, e.g. 37.688")
        usd, source = price_per_hour, (f"price given by the caller: ${price_per_hour:,.4g} per instance-hour of "
                                       f"{hw.instance_type}")
    else:
        if region is None:
            return None, "price unknown: no region given (or give price_per_hour)"
        price = training_price(hw.instance_type, region)
        if price is None:
            return None, (f"price unknown: no recorded on-demand training price of {hw.instance_type} in {region} "
                          "(give price_per_hour)")
        usd, source = price.usd_per_hour, f"{price.source} (read {price.read_on})"
    hourly = usd * count
    per_k = per_bt = None
    if speed is not None:
        per_k = hourly * speed.step_seconds * 1000 / 3600
        per_bt = hourly * (1e9 / speed.tokens_per_second) / 3600
    return Cost(usd_per_hour=hourly, usd_per_1000_steps=per_k, usd_per_billion_tokens=per_bt, source=source), ""


def _speed(shape: ModelShape, layout: Layout, world: World, hw: Hardware, batch: int, micro: int, seq: int,
           stages: tuple[MemoryBreakdown, ...]) -> tuple[Speed | None, str]:
    eff = efficiency(hw.accelerator)
    if eff is None:
        return None, f"speed unknown: no published run of {hw.accelerator} to fit its efficiency on"
    speed = predict(shape, layout, world, hw, eff.value, batch, micro, seq, stage_numel(shape, layout))
    if speed is None:
        return None, (f"speed unknown: {hw.instance_type} has no recorded peak FLOP/s for {layout.precision} or no "
                      "network bandwidth for a layout that crosses instances")
    return speed, f"efficiency {eff.value:.2f} fitted on {eff.fitted_on}"


def plan(shape: ModelShape, layout: Layout, instance_type: str, instance_count: int, global_batch: int,
         seq_len: int | None = None, region: str | None = None, runtime: Runtime | None = None,
         hw: Hardware | None = None, device: Device = "cuda", price_per_hour: float | None = None) -> Plan:
    """Memory per GPU, verdict, speed and cost of one layout. runtime: "smp" (SageMaker's SMP v1; the default for
    ml.* instance types) or "sagelaunch" (sagelaunch.modelparallel). device "cpu": dropout masks in the activation
    dtype, as torch's CPU kernels keep them (the measured local runs), instead of CUDA's bool masks.
    price_per_hour: the caller's USD per instance-hour, used instead of the catalog's (which has none for most
    types: then the cost is "price unknown")."""
    hw = hw or hardware(instance_type)
    if instance_count < 1:
        raise SagelaunchError(f"instance_count={instance_count} must be ≥ 1", field="instance_count",
                              value=instance_count, allowed="≥ 1", fix="use at least one instance")
    seq = seq_len or shape.seq_len
    world = check_layout(layout, instance_count * hw.gpus_per_instance, hw.gpus_per_instance)
    micro = check_batch(global_batch, layout, world)
    rt: Runtime = runtime or "smp"
    stages = tuple(stage_memory(shape, layout, world, micro, seq, hw.memory_bytes, rt, device=device))
    worst = max(stages, key=lambda s: s.total)
    speed, note = _speed(shape, layout, world, hw, global_batch, micro, seq, stages)
    cost, cost_note = _cost(hw, instance_count, region, speed, seq, global_batch, price_per_hour)
    return Plan(model=model_label(shape), parameters=shape.parameters, instance_type=instance_type,
                accelerator=hw.accelerator, instance_count=instance_count, world_size=world.size,
                global_batch=global_batch, micro_batch=micro, seq_len=seq, runtime=rt, layout=layout, stages=stages,
                most_loaded=worst, verdict=verdict_of(worst), speed=speed, speed_note=note, cost=cost,
                cost_note=cost_note)


def lower_bound(shape: ModelShape, layout: Layout, hw: Hardware, instance_count: int,
                runtime: Runtime = "smp") -> MemoryBreakdown:
    """The model states of the most loaded rank: what the layout holds whatever the batch (activations left out)."""
    world = check_layout(layout, instance_count * hw.gpus_per_instance, hw.gpus_per_instance)
    stages = stage_memory(shape, layout, world, 1, shape.seq_len, hw.memory_bytes, runtime, activations=False,
                          only_ends=True)
    return max(stages, key=lambda s: s.total)


def smallest_changes(shape: ModelShape, layout: Layout, hw: Hardware, instance_count: int,
                     runtime: Runtime = "smp") -> list[str]:
    """Single changes to `layout` under which its lower bound fits, each at its smallest value:
    shard_optimizer_state, a larger pipeline or tensor degree, sharded data parallelism."""
    world = instance_count * hw.gpus_per_instance
    changes: list[tuple[str, Layout]] = []
    if not layout.shard_optimizer_state and layout.sdp == 1:
        changes.append(("set shard_optimizer_state=True", layout.model_copy(update={"shard_optimizer_state": True})))
    for name, field, limit in (("pipeline_parallel_degree", "pp", min(world, shape.layers)),
                               ("tensor_parallel_degree", "tp", hw.gpus_per_instance)):
        current = getattr(layout, field)
        for degree in range(current + 1, limit + 1):
            candidate = layout.model_copy(update={field: degree})
            changes.append((f"{name} ≥ {degree}", candidate))
    if layout.tp == 1 and layout.pp == 1 and layout.sdp == 1 and not layout.shard_optimizer_state:
        for degree in range(2, world + 1):
            changes.append((f"sharded_data_parallel_degree ≥ {degree}", layout.model_copy(update={"sdp": degree})))
    found: list[str] = []
    seen: set[str] = set()
    for text, candidate in changes:
        key = text.split(" ")[0]
        if key in seen:
            continue
        try:
            bound = lower_bound(shape, candidate, hw, instance_count, runtime)
        except SagelaunchError:
            continue  # this degree does not divide the world or the model
        if bound.total <= bound.capacity:
            found.append(text)
            seen.add(key)
    return found
