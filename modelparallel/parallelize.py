"""smp.DistributedModel's techniques as one sequence of steps, each in its technique's package (as torchtitan's
parallelize_llama runs apply_tp, apply_ac, apply_compile, apply_fsdp): the options are typed records built once
from the validated SMP parameters, and each step returns what it did as a typed record.

    check_delayed               refuse a materialised model under delayed_parameter_initialization
    apply_precision             fp16/bf16 parameters (first: SMP casts the whole model, and a model built on the
                                meta device is then initialised in that dtype)
    place_on_device             materialise (tp == 1) or move to this rank's device
    apply_tensor_parallel       SMP's names; DTensor plans over the tp sub-mesh
    apply_sharding              sharded data parallelism (FSDP2)
    apply_data_parallel         the replica group; DDP (pp == 1), or gradients averaged after the step
    apply_activation_offload    offload_activations
    apply_pipeline              at the first @smp.step (DistributedModel.partition), as SMP v1 partitions then
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagelaunch.modelparallel.activations.apply import ActivationOptions, apply_activation_offload
from sagelaunch.modelparallel.data.apply import (DataParallelOptions, DataParallelResult, apply_data_parallel,
                                                 apply_sharding)
from sagelaunch.modelparallel.pipeline.apply import PipelineOptions
from sagelaunch.modelparallel.precision.apply import PrecisionOptions, apply_precision
from sagelaunch.modelparallel.tensor.apply import (TensorParallelOptions, TensorParallelResult,
                                                   apply_tensor_parallel, place_on_device)
from sagelaunch.modelparallel.tensor.delayed_init import check_delayed

if TYPE_CHECKING:
    import torch
    import torch.nn as nn

    from sagelaunch.jobspec.smp import SMPParameters
    from sagelaunch.modelparallel.activations.offload import ActivationOffloader
    from sagelaunch.modelparallel.core.state import SMPState


@dataclass(frozen=True)
class ParallelOptions:
    """Each technique's options: the SMP parameters and smp.DistributedModel's arguments that concern it."""

    tensor: TensorParallelOptions
    pipeline: PipelineOptions
    activations: ActivationOptions
    precision: PrecisionOptions
    data: DataParallelOptions

    @classmethod
    def from_config(cls, cfg: SMPParameters, average_grads_across_microbatches: bool = True,
                    bucket_cap_mb: int = 25, broadcast_buffers: bool = True,
                    gradient_as_bucket_view: bool = False) -> ParallelOptions:
        return cls(TensorParallelOptions.from_config(cfg),
                   PipelineOptions.from_config(cfg, average_grads_across_microbatches),
                   ActivationOptions.from_config(cfg),
                   PrecisionOptions.from_config(cfg),
                   DataParallelOptions.from_config(cfg, bucket_cap_mb, broadcast_buffers, gradient_as_bucket_view))


@dataclass(frozen=True)
class Parallelized:
    """What parallelize did to the model: read by DistributedModel's forward, backward and step."""

    options: ParallelOptions
    half_dtype: torch.dtype | None  # the dtype the model computes in (fp16/bf16), None for fp32
    tensor: TensorParallelResult
    data: DataParallelResult
    offloader: ActivationOffloader | None


def parallelize(module: nn.Module, options: ParallelOptions, run: SMPState) -> Parallelized:
    """Apply every technique to `module` in place, in order (the pipeline split comes at the first step)."""
    check_delayed(module, options.tensor.delayed_parameter_initialization)
    half_dtype = apply_precision(module, options.precision)
    place_on_device(module, options.tensor, run)
    tensor = apply_tensor_parallel(module, options.tensor, run)
    apply_sharding(module, options.data, half_dtype, run)
    data = apply_data_parallel(module, options.data, tensor, options.pipeline.pipelined, run)
    offloader = apply_activation_offload(options.activations, run)
    return Parallelized(options, half_dtype, tensor, data, offloader)
