"""SMP's fp16/bf16 model (its Bit16_Module): half parameters, half inputs in, fp32 outputs out."""

from __future__ import annotations

from typing import Any

import torch


def _cast_floating(value: Any, dtype: torch.dtype) -> Any:
    from torch.utils._pytree import tree_map_only

    return tree_map_only(torch.Tensor, lambda t: t.to(dtype) if t.is_floating_point() and t.dtype != dtype else t,
                         value)


def to_half_inputs(args: Any, kwargs: Any, dtype: torch.dtype) -> tuple[Any, Any]:
    """Floating inputs in the model's half dtype (token ids and masks of integer type are left alone)."""
    return _cast_floating(args, dtype), _cast_floating(kwargs, dtype)


def to_float_outputs(output: Any) -> Any:
    """The model's floating outputs in fp32, as SMP returns them (a loss computed from them is fp32)."""
    return _cast_floating(output, torch.float32)
