"""sharded_data_parallel_degree > 1: parameters, gradients and optimizer state sharded over the data-parallel
ranks with FSDP2 (`fully_shard`), as SMP v1's sharded data parallelism does (ZeRO-3 style).

Groups of `sharded_data_parallel_degree` consecutive ranks each shard one copy of the model; with fewer of them
than data-parallel ranks the copies are replicated across groups (HSDP: a 2-D mesh replicate × shard). Each
transformer block (every child of an nn.ModuleList, e.g. GPT-2's `h`, Llama's `layers`) is its own FSDP unit, so
only one block's parameters are gathered at a time; the root takes the rest (embeddings, tied heads, norms).
(jobspec.smp already refuses it with tensor/pipeline parallelism and with shard_optimizer_state.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.distributed as dist
import torch.nn as nn

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup
    from torch.distributed.device_mesh import DeviceMesh


def sharding_mesh(device_type: str, world: int, sdp: int) -> DeviceMesh:
    """The FSDP mesh: 1-D over groups of `sdp` ranks, or 2-D (replicate, shard) when sdp < world."""
    from torch.distributed.device_mesh import DeviceMesh

    ranks = torch.arange(world).reshape(world // sdp, sdp)
    mesh = DeviceMesh(device_type, ranks, mesh_dim_names=("sdp_replicate", "sdp_shard"))
    return mesh if world > sdp else mesh["sdp_shard"]


def _units(module: nn.Module) -> list[nn.Module]:
    return [child for m in module.modules() if isinstance(m, nn.ModuleList) for child in m.children()
            if any(True for _ in child.parameters())]


def shard_model(module: nn.Module, mesh: DeviceMesh, group: ProcessGroup, compute_dtype: torch.dtype | None = None) -> None:
    """Start every rank from rank 0's weights (FSDP2 does not broadcast), then shard block by block. With a
    compute_dtype (SMP's fp16/bf16) the sharded parameters stay fp32 and are gathered in that dtype; gradients are
    reduced in fp32."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

    with torch.no_grad():
        src = dist.get_global_rank(group, 0)
        for p in module.parameters():
            dist.broadcast(p.data, src=src, group=group)
    policy = MixedPrecisionPolicy(param_dtype=compute_dtype, reduce_dtype=torch.float32) if compute_dtype else None
    options = {"mp_policy": policy} if policy else {}
    for unit in _units(module):
        fully_shard(unit, mesh=mesh, **options)
    fully_shard(module, mesh=mesh, **options)


def gradient_sync(module: nn.Module, enabled: bool) -> None:
    """Accumulate microbatch gradients unreduced; reduce-scatter with the last microbatch's backward."""
    module.set_requires_gradient_sync(enabled)


def reshard(module: nn.Module) -> None:
    """After a step: the root keeps its parameters gathered after a forward without backward (an evaluation
    step), which would leave the full tensors, not the shards, as the model's parameters (named_parameters(),
    state dicts); reshard it as a training step's backward does."""
    module.reshard()
