"""smp.utils: SMP's small helpers that scripts import."""

from __future__ import annotations

from typing import Any

from sagelaunch.modelparallel.core import state


def rmsg(message: str) -> str:
    """`message` prefixed with this process's ranks, as SMP's log lines are."""
    if not state.initialized:
        return message
    lay = state.layout
    return f"[{lay.rank}|pp{lay.pp_rank}|tp{lay.tp_rank}|rdp{lay.rdp_rank}] {message}"


def get_distribution_axis(obj: Any) -> int | None:
    """The axis along which tensor parallelism splits `obj` (a parameter of the DistributedModel) over the tp ranks;
    None when it is not split: replicated, not a parameter of the model, or no DistributedModel yet (SMP's answer
    for "not a distributed tensor")."""
    model = state.model
    if model is None or not model.tp_shard_dims:
        return None
    from sagelaunch.modelparallel.model import _script_fp16_shard_name  # lazy: smp.utils loads before torch

    if (shard_of := _script_fp16_shard_name(obj)) is not None:  # a shard the script's fp16 optimizer holds
        return model.tp_shard_dims.get(shard_of)
    for name, param in model.get_module().named_parameters():
        if param is obj:
            return model.tp_shard_dims.get(name)
    return None
