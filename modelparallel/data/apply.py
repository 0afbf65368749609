"""parallelize's data-parallel steps: sharded data parallelism (FSDP2) when sharded_data_parallel_degree > 1, then
the replica group (rdp with tensor parallelism, else dp) and DDP over it.

pp == 1: DDP (tensor-parallel DTensor parameters are ignored by DDP's reducer and averaged after the step).
pp > 1: the schedules call backward once per microbatch and stage outside DDP's forward/backward pairing (DDP's
bucket rebuild asserts with several stages per rank), so all stage gradients are averaged after the schedule."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sagelaunch.modelparallel.data.ddp import broadcast_parameters, wrap_ddp
from sagelaunch.modelparallel.data.sharded import shard_model, sharding_mesh

if TYPE_CHECKING:
    import torch
    import torch.nn as nn

    from sagelaunch.jobspec.smp import SMPParameters
    from sagelaunch.modelparallel.core.state import SMPState
    from sagelaunch.modelparallel.tensor.apply import TensorParallelResult


@dataclass(frozen=True)
class DataParallelOptions:
    ddp: bool
    sharded_degree: int  # sharded_data_parallel_degree
    sdp_gradient_clipping: float
    # smp.DistributedModel's DDP arguments
    bucket_cap_mb: int = 25
    broadcast_buffers: bool = True
    gradient_as_bucket_view: bool = False

    @classmethod
    def from_config(cls, cfg: SMPParameters, bucket_cap_mb: int, broadcast_buffers: bool,
                    gradient_as_bucket_view: bool) -> DataParallelOptions:
        return cls(cfg.ddp, cfg.sharded_data_parallel_degree, cfg.sdp_gradient_clipping, bucket_cap_mb,
                   broadcast_buffers, gradient_as_bucket_view)

    @property
    def sharded(self) -> bool:
        return self.sharded_degree > 1


@dataclass
class DataParallelResult:
    replica_group_name: str  # "rdp" with tensor-parallel shards, else "dp"
    replica_size: int
    manual_sync: bool  # gradients DDP does not reduce are averaged after the step (DistributedModel.finish_step)
    forward_module: nn.Module | None  # what the model's forward calls (pp == 1); None: the pipeline's stages
    ddp_modules: list[nn.Module] = field(default_factory=list)


def apply_sharding(module: nn.Module, options: DataParallelOptions, compute_dtype: torch.dtype | None,
                   run: SMPState) -> None:
    """sharded_data_parallel_degree > 1: FSDP2 over the data-parallel ranks (replacing DDP; jobspec: tp = pp = 1)."""
    if not options.sharded:
        return
    import torch.distributed as dist

    mesh = sharding_mesh(run.device.type, dist.get_world_size(), options.sharded_degree)
    shard_model(module, mesh, run.groups["dp"], compute_dtype=compute_dtype)


def apply_data_parallel(module: nn.Module, options: DataParallelOptions, tensor: TensorParallelResult,
                        pipelined: bool, run: SMPState) -> DataParallelResult:
    name = "rdp" if tensor.shard_dims else "dp"
    group, size = run.groups[name], len(run.layout.groups[name])
    if tensor.shard_dims and size > 1:
        broadcast_parameters(module, group, only_dtensor=True)
    manual_sync = bool(options.ddp and size > 1 and (pipelined or tensor.shard_dims))
    if pipelined:  # the stages are made at the first step (DistributedModel.partition)
        return DataParallelResult(name, size, manual_sync, forward_module=None)
    if not (options.ddp and size > 1 and not options.sharded):
        return DataParallelResult(name, size, manual_sync, forward_module=module)
    ddp = wrap_ddp(module, group, run.device, options.bucket_cap_mb, options.broadcast_buffers,
                   options.gradient_as_bucket_view)
    if ddp is None:
        return DataParallelResult(name, size, manual_sync, forward_module=module)
    return DataParallelResult(name, size, manual_sync, forward_module=ddp, ddp_modules=[ddp])
