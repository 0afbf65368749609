"""Data parallelism over the replica group (the ranks that hold the same part of the model): DDP when one
forward/backward pair runs per step, otherwise gradients averaged after the step; replicas start from the group's
first rank's weights."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
import torch.nn as nn

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup


def is_dtensor(t: Any) -> bool:
    from torch.distributed.tensor import DTensor

    return isinstance(t, DTensor)


def buffer_sync_argument(broadcast_buffers: bool) -> dict[str, bool]:
    """SMP's broadcast_buffers is DDP's per-forward buffer sync: torch ≥ 2.13 names it forward_sync_buffers and
    warns (FutureWarning, on every rank) when broadcast_buffers is passed; older torch only knows the old name."""
    if "forward_sync_buffers" in inspect.signature(nn.parallel.DistributedDataParallel.__init__).parameters:
        return {"forward_sync_buffers": broadcast_buffers}
    return {"broadcast_buffers": broadcast_buffers}


def wrap_ddp(module: nn.Module, group: ProcessGroup, device: torch.device, bucket_cap_mb: int,
             broadcast_buffers: bool, gradient_as_bucket_view: bool) -> nn.Module | None:
    """DDP over `group`, or None when every parameter is a tensor-parallel DTensor (DDP's reducer does not take
    DTensors: they are ignored by it and averaged after the step)."""
    ignore = [n for n, p in module.named_parameters(remove_duplicate=False) if is_dtensor(p)]  # tied too
    if ignore:
        nn.parallel.DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(module, ignore)
    if len(ignore) == len(list(module.parameters())):
        return None
    return nn.parallel.DistributedDataParallel(
        module, process_group=group, bucket_cap_mb=bucket_cap_mb, **buffer_sync_argument(broadcast_buffers),
        gradient_as_bucket_view=gradient_as_bucket_view,
        device_ids=[device.index] if device.type == "cuda" else None)


def broadcast_parameters(module: nn.Module, group: ProcessGroup, only_dtensor: bool) -> None:
    """Start every replica from the replica group's first rank's weights (DDP does this for its own)."""
    src = dist.get_global_rank(group, 0)
    with torch.no_grad():
        for p in module.parameters():
            if is_dtensor(p):
                dist.broadcast(p.to_local(), src=src, group=group)
            elif not only_dtensor:
                dist.broadcast(p.data, src=src, group=group)


def average_gradients(grads: list[torch.Tensor], group: ProcessGroup, size: int) -> None:
    """Average `grads` in place over `group` (of `size` ranks) in one flat all-reduce."""
    from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

    flat = _flatten_dense_tensors(grads)
    dist.all_reduce(flat, group=group)
    flat /= size
    for g, synced in zip(grads, _unflatten_dense_tensors(flat, grads)):
        g.copy_(synced)
