"""SMP's default (prescaled_batch=False) tensor-parallel batch semantics.

Every tensor-parallel rank gets its own batch (data is sharded by dp_rank, and dp includes the tp ranks).
Distributed modules need the same input on all tp ranks, so the model runs on the tp group's gathered
("scaled") batch and each rank keeps its own slice of the output. The slice's backward all-gathers the
slices' gradients and divides by tp: every tp rank then back-propagates the same full gradient (what DTensor's
row/column-wise backward assumes) and gradients equal d(mean of the tp ranks' losses); averaging over the
reduced-data-parallel group then gives the global-batch mean, as SMP does.
"""

from __future__ import annotations

from typing import Any


def _all_gather_cat(t, group, size: int):
    import torch
    import torch.distributed as dist

    parts = [torch.empty_like(t) for _ in range(size)]
    dist.all_gather(parts, t.contiguous(), group=group)
    return torch.cat(parts, dim=0)


def gather_inputs(value: Any, group, size: int) -> Any:
    """Concatenate every (batched) tensor in `value` across the tp group along dim 0 (data: no autograd)."""
    import torch

    if isinstance(value, torch.Tensor):
        if value.dim() == 0:
            return value
        with torch.no_grad():
            return _all_gather_cat(value.detach(), group, size)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(gather_inputs(v, group, size) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(gather_inputs(v, group, size) for v in value)
    if isinstance(value, dict):
        return {k: gather_inputs(v, group, size) for k, v in value.items()}
    return value


def _slice_function():
    import torch

    class _KeepOwnSlice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, full, group, rank, size):
            ctx.group, ctx.size = group, size
            return full.chunk(size, dim=0)[rank].clone()

        @staticmethod
        def backward(ctx, grad):
            return _all_gather_cat(grad, ctx.group, ctx.size) / ctx.size, None, None, None

    return _KeepOwnSlice


_SLICE = None


def keep_own_slice(value: Any, group, rank: int, size: int) -> Any:
    """This tp rank's part of every batched tensor in the model output (recursively, HF ModelOutput included)."""
    global _SLICE
    import torch

    if isinstance(value, torch.Tensor):
        if value.dim() == 0:
            return value
        if _SLICE is None:
            _SLICE = _slice_function()
        if value.requires_grad:
            return _SLICE.apply(value, group, rank, size)
        return value.chunk(size, dim=0)[rank]
    if isinstance(value, dict):  # ModelOutput is an OrderedDict: rebuild with the same type
        items = {k: keep_own_slice(v, group, rank, size) for k, v in value.items()}
        try:
            return type(value)(**items)
        except TypeError:
            return items
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(keep_own_slice(v, group, rank, size) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(keep_own_slice(v, group, rank, size) for v in value)
    return value
