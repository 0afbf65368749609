"""Step time from FLOPs, the pipeline bubble and the communication a layout cannot hide.

- FLOPs per step (Narayanan et al. 2021, arXiv 2104.04473, eq. 3, written per matmul so that other FFN widths and
  grouped-query attention follow): forward per token 2·(layer matmul parameters) + 4·L·s·h (attention scores and
  their product with V) + 2·V·h (logits); training is 3× forward, 4× for the layers with activation checkpointing
  (the recompute). For ffn = 4h this is their 72·Bslh²(1 + s/6h + V/12lh), and 96·Bslh²(1 + s/6h + V/16lh) with
  recompute.
- Compute time = FLOPs / (GPUs · peak · efficiency), one efficiency per accelerator fitted on a published run.
- Pipeline bubble: (p−1)/m of the ideal time, (p−1)/(v·m) interleaved (v chunks per rank); its share of the step is
  (p−1)/(m+p−1) (and (p−1)/(v·m+p−1)).
- Tensor-parallel all-reduces (Megatron layout: two per layer forward, two backward, two more in a recompute) are
  on the critical path: ring all-reduce 2(t−1)/t · bytes / bandwidth, NVLink within an instance, the network across.
- Data-parallel gradient all-reduce overlaps the backward pass (DDP's buckets); what exceeds it is exposed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.pipeline_schedule import bubble_share
from sagelaunch.planner.hardware import Hardware
from sagelaunch.planner.layout import Layout, World
from sagelaunch.planner.memory import per_shape
from sagelaunch.planner.shape import ModelShape

BACKWARD_OVERLAP = 2 / 3  # the share of a step's compute that is backward (2 of 3 forward-equivalents)


class Speed(BaseModel):
    model_config = ConfigDict(frozen=True)

    step_seconds: float
    compute_seconds: float
    bubble_share: float
    tp_comm_seconds: float
    dp_comm_exposed_seconds: float
    samples_per_second: float
    tokens_per_second: float
    model_flops_per_step: float  # without recompute (MFU counts useful work)
    hardware_flops_per_step: float  # with recompute
    mfu: float


def flops_per_step(shape: ModelShape, samples: int, seq: int, recompute: bool) -> tuple[float, float]:
    """(model FLOPs, hardware FLOPs) of one training step over `samples` sequences."""
    memo = per_shape(shape)
    if "matmul" not in memo:  # the layers' matmul weights and biases
        memo["matmul"] = sum(t.numel for unit in shape.units for t in unit if t.split == "split" or t.tp_module)
    layer_matmul: int = memo["matmul"]  # type: ignore[assignment]
    tokens = samples * seq
    layers_fwd = tokens * (2 * layer_matmul + 4 * shape.layers * seq * shape.hidden)
    logits_fwd = tokens * 2 * shape.vocab * shape.hidden if shape.logits else 0
    model = 3 * (layers_fwd + logits_fwd)
    return model, model + (layers_fwd if recompute else 0)


def _ring(bytes_: float, ranks: int, bandwidth: float) -> float:
    return 2 * (ranks - 1) / ranks * bytes_ / bandwidth if ranks > 1 else 0.0


def predict(shape: ModelShape, layout: Layout, world: World, hw: Hardware, efficiency: float, global_batch: int,
            micro_batch: int, seq: int, stage_numel: int) -> Speed | None:
    """stage_numel: the parameters one rank of the largest pipeline stage holds before data-parallel sharding.
    None when a figure it needs is unknown (the precision's peak, or the network a layout crosses)."""
    precision = "tf32" if layout.precision == "fp32" and "tf32" in hw.peak_flops else layout.precision
    peak = hw.peak_flops.get(precision)
    if peak is None:
        return None
    model, hardware = flops_per_step(shape, global_batch, seq, layout.activation_checkpointing)
    compute = hardware / (world.size * peak * efficiency)
    p, m = layout.pp, layout.microbatches
    virtual = 2 if layout.pipeline == "interleaved" and p > 1 and shape.layers >= 2 * p else 1
    bubble = bubble_share(p, m, virtual)
    per_gpu_inter = hw.inter_node_bandwidth / hw.gpus_per_instance if hw.inter_node_bandwidth else None
    tp_bw = hw.intra_node_bandwidth if layout.tp <= hw.gpus_per_instance else per_gpu_inter
    element = 2 if layout.precision != "fp32" else 4
    tp_comm = 0.0
    if layout.tp > 1:
        if not tp_bw:
            return None
        per_layer = 6 if layout.activation_checkpointing else 4
        layers_per_rank = shape.layers / p
        bytes_ = micro_batch * seq * shape.hidden * element
        tp_comm = per_layer * layers_per_rank * m * _ring(bytes_, layout.tp, tp_bw)
    dp = world.size // (layout.tp * layout.pp) if layout.sdp == 1 else world.size
    dp_exposed = 0.0
    if dp > 1:
        instances = world.size // hw.gpus_per_instance if world.size >= hw.gpus_per_instance else 1
        bw = hw.intra_node_bandwidth if instances == 1 else per_gpu_inter
        if not bw:
            return None
        factor = 1.5 if layout.sdp > 1 else 1.0  # FSDP: all-gather twice and reduce-scatter = 1.5 all-reduces
        dp_time = factor * _ring(stage_numel * element, dp, bw)
        dp_exposed = max(0.0, dp_time - BACKWARD_OVERLAP * compute)
    step = compute / (1 - bubble) + tp_comm + dp_exposed
    return Speed(step_seconds=step, compute_seconds=compute, bubble_share=bubble, tp_comm_seconds=tp_comm,
                 dp_comm_exposed_seconds=dp_exposed, samples_per_second=global_batch / step,
                 tokens_per_second=global_batch * seq / step, model_flops_per_step=model,
                 hardware_flops_per_step=hardware, mfu=model / (step * world.size * peak))
