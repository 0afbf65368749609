"""The records of scripts/planner_measure.py: what one rank of one model-parallel configuration held, measured.

One record per (configuration, rank). Every byte count comes from a tracker of live tensor storages (torch's
MemTracker; each storage counted once, views share it), on the CPU, during the third training step (after two untracked ones: optimizer state made, DDP's buckets rebuilt). The planner's
memory model is checked against these (its predictions per rank beside `MeasuredRank`'s figures).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Family = Literal["gpt2", "bert", "llama"]
Precision = Literal["fp32", "bf16"]


class MeasuredConfig(BaseModel):
    """One layout of one tiny model, as the harness ran it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    name: str
    family: Family
    model_class: str  # transformers class: GPT2LMHeadModel, BertForMaskedLM, LlamaForCausalLM
    transformers_config: dict[str, Any]  # the model config's to_dict() (attn_implementation "eager")
    world_size: int
    tp: int  # tensor_parallel_degree
    pp: int  # pipeline_parallel_degree
    dp: int  # smp.dp_size(): world / pp (SMP v1 counts the tp ranks of a replica in dp)
    rdp: int  # smp.rdp_size(): world / (pp * tp), the ranks holding different data
    shard_optimizer_state: bool
    sharded_data_parallel_degree: int  # 1 = off
    activation_checkpointing: bool  # smp.set_activation_checkpointing on the layer stack, strategy "each"
    microbatches: int
    precision: Precision  # bf16: SMP's {"bf16": true} (half parameters, fp32 masters in the optimizer)
    batch_per_rank: int  # sequences each rank feeds to one step (all microbatches together)
    prescaled_batch: bool  # tp > 1: the tp ranks of a replica read the same batch
    seq_len: int
    optimizer: str  # "Adam" (torch.optim.Adam, fp32 state: exp_avg, exp_avg_sq, step)
    smp_config: dict[str, Any]  # exactly what smp.init received


class MeasuredRank(BaseModel):
    """What one rank held (bytes). Definitions: docs in /README.md 'Planner memory, measured' and the harness."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    config: MeasuredConfig
    rank: int
    pp_rank: int
    tp_rank: int
    rdp_rank: int
    parameter_bytes: int  # the rank's model parameters (its tp shards, pp stage, sdp shard) at the step's start
    parameter_numel: int  # elements of those parameters (local shards; a tied weight once)
    local_parameter_shapes: dict[str, list[int]]  # name → local shape (DTensor: its local shard)
    buffer_bytes: int  # the model's registered buffers (e.g. position ids, rotary tables)
    gradient_bytes: int  # the model parameters' .grad after forward+backward of all microbatches, before step
    master_parameter_bytes: int  # bf16: the fp32 master copies (0 in fp32)
    master_gradient_bytes: int  # bf16: the fp32 master gradients as the optimizer step begins (0 in fp32)
    optimizer_state_bytes: int  # Adam state of this rank (its ZeRO shard with shard_optimizer_state), after step
    optimizer_state_check_bytes: int  # the same state summed by numel × element size (the optimizer's own count)
    activation_peak_bytes: int  # highest total of tensors made outside backward and the optimizer step
    backward_peak_bytes: int  # highest total of backward's tensors and the parameter gradients, in forward+backward
    peak_bytes: int  # highest total of all tracked live storages during the step
    peak_breakdown: dict[str, int]  # the categories at that moment (MemTracker's names)
    ddp_bucket_bytes: int  # DDP's gradient buckets (pp 1, dp > 1), made before the measured step
    # of which peak_bytes already counts (the tracker counts a bucket from the reducer's first copy into it in
    # backward; a peak inside backward holds it, one at the forward's end does not)
    ddp_bucket_bytes_in_peak: int = 0
    # --explain only: the activation storages live at the activations' height, largest first ({bytes, op, shape,
    # dtype, module: the innermost module running when it was made, backward: made during a recomputation})
    activation_peak_tensors: list[dict[str, Any]] = []
    step_seconds: float = Field(ge=0)  # wall time of the measured step (tracker on; not a speed figure)


class MeasuredRun(BaseModel):
    """The file `--out` holds."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    torch_version: str
    transformers_version: str
    tracker: str  # "torch.distributed._tools.mem_tracker.MemTracker"
    records: list[MeasuredRank]
