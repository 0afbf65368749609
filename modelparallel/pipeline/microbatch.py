"""Splitting smp.step arguments into microbatches (SMP rules: every tensor along its batch axis, recursively
through list/tuple/dict/set, objects with `smp_slice`; `non_split_inputs` and `input_split_axes` by name)."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from sagelaunch.modelparallel.errors import SMPValidationError


def _split(value: Any, n: int, axis: int, where: str) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        if value.dim() == 0:
            return [value] * n
        size = value.shape[axis]
        if size % n:
            raise SMPValidationError(
                f"smp.step: argument {where} has batch size {size} along axis {axis}, which is not divisible by "
                f"microbatches={n}; use a batch size that is a multiple of {n} (e.g. drop_last=True in the "
                f"DataLoader), change microbatches, or list the argument in non_split_inputs"
            )
        return list(torch.chunk(value, n, dim=axis))
    if hasattr(value, "smp_slice"):
        return [value.smp_slice(n, i, axis) for i in range(n)]
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        parts = [_split(v, n, axis, f"{where}.{f}") for f, v in zip(value._fields, value)]
        return [type(value)(*(p[i] for p in parts)) for i in range(n)]
    if isinstance(value, (list, tuple)):
        parts = [_split(v, n, axis, f"{where}[{j}]") for j, v in enumerate(value)]
        return [type(value)(p[i] for p in parts) for i in range(n)]
    if isinstance(value, dict):
        named = {k: _split(v, n, axis, f"{where}[{k!r}]") for k, v in value.items()}
        return [type(value)((k, p[i]) for k, p in named.items()) for i in range(n)]
    if isinstance(value, set):
        parts = [_split(v, n, axis, where) for v in value]
        return [set(p[i] for p in parts) for i in range(n)]
    return [value] * n


def split_arguments(fn: Callable, args: tuple, kwargs: dict, n: int, non_split_inputs=None,
                    input_split_axes=None) -> list[tuple[tuple, dict]]:
    """[(args, kwargs) of microbatch 0, ...]; raises SMPValidationError naming the argument that does not divide."""
    non_split = set(non_split_inputs or ())
    axes = dict(input_split_axes or {})
    sig = inspect.signature(fn)
    bound = sig.bind(*args, **kwargs)
    unknown = (non_split | set(axes)) - set(sig.parameters)
    if unknown:
        raise SMPValidationError(
            f"smp.step: non_split_inputs/input_split_axes name {sorted(unknown)}, which are not parameters of "
            f"{fn.__name__}{sig}"
        )
    per_name: dict[str, list[Any]] = {}
    for name, value in bound.arguments.items():
        kind = sig.parameters[name].kind
        if name in non_split:
            per_name[name] = [value] * n
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            parts = [_split(v, n, axes.get(name, 0), f"{name}[{j}]") for j, v in enumerate(value)]
            per_name[name] = [tuple(p[i] for p in parts) for i in range(n)]
        elif kind is inspect.Parameter.VAR_KEYWORD:
            named = {k: _split(v, n, axes.get(k, 0), k) for k, v in value.items()}
            per_name[name] = [{k: p[i] for k, p in named.items()} for i in range(n)]
        else:
            per_name[name] = _split(value, n, axes.get(name, 0), repr(name))
    out = []
    for i in range(n):
        mb = inspect.BoundArguments(sig, {name: vals[i] for name, vals in per_name.items()})
        out.append((mb.args, mb.kwargs))
    return out
