"""Whose arguments an @smp.step call runs on when the ranks of one pipeline pass different ones.

SMP v1 runs the step function on each pipeline's first rank only: pp_rank 0 splits its own arguments into
microbatches and leads the step; every other pp rank serves the module requests sent to it and receives the step's
outputs from the leader, never reading its own arguments (smdistributed-modelparallel's torch/step.py,
StepFunction.__call__: `if pp_rank() == 0: ... run_step_leader(mb_args, mb_kwargs, ...)` else
`run_step_follower()`; torch/server.py, run_step_leader). Scripts rely on it: AWS's BERT example seeds each rank by
its local rank and reads files by world rank, so the stages of one replica load different batches.

Here every stage runs the step function (the last one computes the loss), so each takes pp_rank 0's data: the
tensors and plain values (numbers, strings) in the arguments, through lists, tuples and dicts. Other objects (the
model, the optimizer, an argparse Namespace) stay each rank's own. A rank whose arguments differ in structure from
the leader's cannot be lined up with them and is refused by name.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
import torch.distributed as dist
from torch.utils._pytree import tree_flatten, tree_unflatten

from sagelaunch.modelparallel.errors import SMPValidationError

_PLAIN = (bool, int, float, complex, str, bytes)
_warned = False


def _describe(leaf: Any) -> tuple:
    """What the leader sends for one leaf: a tensor's shape and dtype (the values follow by broadcast), a plain
    value itself, or only the kind of an object that stays local."""
    if isinstance(leaf, torch.Tensor):
        return ("tensor", tuple(leaf.shape), leaf.dtype)
    if leaf is None or isinstance(leaf, _PLAIN):
        return ("plain", leaf)
    return ("object", type(leaf).__qualname__)


def _shape_of(description: tuple) -> tuple:
    """The part of a leaf's description that must match across the pipeline's ranks."""
    return description[:1] if description[0] != "object" else description


def leader_arguments(args: tuple, kwargs: dict, group, leader: int, pp_rank: int) -> tuple[tuple, dict]:
    """`args`/`kwargs` with their data replaced by those the pipeline's first rank (global rank `leader`) passed.
    Every rank of `group` calls this at each step."""
    global _warned
    leaves, spec = tree_flatten((args, kwargs))
    mine = (str(spec), [_describe(leaf) for leaf in leaves])
    everyone: list[Any] = [None] * dist.get_world_size(group)
    dist.all_gather_object(everyone, mine, group=group)  # one collective: each rank sees every rank's structure
    their_spec, theirs = everyone[0]  # the group's first rank is pp_rank 0
    lined_up = [_shape_of(d) for d in theirs]
    other = [r for r, (s, d) in enumerate(everyone) if s != their_spec or [_shape_of(x) for x in d] != lined_up]
    if other:  # on every rank at once, so none is left waiting in a broadcast below
        raise SMPValidationError(
            "smp.step: the ranks of a pipeline passed arguments of different structure; as in SMP v1 the step runs on "
            "pp_rank 0's arguments, which every rank must be able to line up with its own (the same arguments in "
            f"the same order, tensors where pp_rank 0 has tensors); pp_rank 0: {their_spec} {theirs}; "
            f"pp_rank {other[0]}: {everyone[other[0]][0]} {everyone[other[0]][1]}",
            field="smp.step arguments", value=f"pp_rank {other[0]}", allowed="the structure of pp_rank 0's arguments",
            fix="pass every rank of a pipeline the same kinds of arguments (its data may differ: pp_rank 0's is used)")
    if pp_rank == 0:
        for leaf in leaves:
            if isinstance(leaf, torch.Tensor):
                dist.broadcast(leaf.detach().contiguous(), src=leader, group=group)
        return args, kwargs
    differs = False
    for i, (leaf, description) in enumerate(zip(leaves, theirs)):
        if description[0] == "tensor":
            received = torch.empty(description[1], dtype=description[2], device=leaf.device)
            dist.broadcast(received, src=leader, group=group)
            differs = differs or received.shape != leaf.shape or received.dtype != leaf.dtype or not torch.equal(
                received, leaf)
            leaves[i] = received
        elif description[0] == "plain":
            differs = differs or description[1] != leaf
            leaves[i] = description[1]
    if differs and not _warned:
        _warned = True
        warnings.warn(f"smp.step: pp_rank {pp_rank} passed other data than pp_rank 0; as SMP v1 does, the step runs "
                      "on pp_rank 0's (this rank's own arguments are not read)", stacklevel=3)
    return tree_unflatten(leaves, spec)
