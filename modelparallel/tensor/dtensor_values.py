"""A tensor-parallel DTensor's whole value and this rank's part of a whole tensor: what checkpoints and
smp's verification helpers (test.torch.utils) read and write, without the rest of tensor parallelism."""

from __future__ import annotations

from torch.distributed.tensor import DTensor, distribute_tensor


def full_value(value):
    """The whole tensor of a tensor-parallel DTensor (collective over the tp group; strided shards such as
    GPT-2's fused q|k|v come back in the original order); anything else as it is."""
    return value.full_tensor() if isinstance(value, DTensor) else value


def own_part(full, like):
    """This rank's local shard of the whole tensor `full`, sharded like the DTensor `like` (no communication)."""
    if not isinstance(like, DTensor):
        return full
    return distribute_tensor(full.to(like.device), like.device_mesh, like.placements, src_data_rank=None).to_local()
