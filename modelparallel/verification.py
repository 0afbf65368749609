"""SMP's test helpers that example scripts import (`smdistributed.modelparallel.test.torch.utils`): a tolerance,
an fp16 wrapper, structure comparison, a model dump and a gradient-count hook. The real library's module is not
published; these are sagelaunch's own implementations of the names, each doing what its name and its callers in
public scripts say (the BERT example imports `verify` and `dump_model`, the fp16 tests `ATOL` and `FP16_Module`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
import torch.nn as nn
from torch.utils._pytree import tree_map

from sagelaunch.modelparallel.tensor.dtensor_values import full_value

# the absolute tolerance SMP's own checks compare fp32 results with
ATOL = 1e-5


def _to(dtype_from: torch.dtype, dtype_to: torch.dtype, value: Any) -> Any:
    return tree_map(lambda t: t.to(dtype_to) if isinstance(t, torch.Tensor) and t.dtype == dtype_from else t, value)


class FP16_Module(nn.Module):  # noqa: N801  (SMP's and Megatron's name)
    """Megatron's fp16 wrapper: the module's parameters in half precision, fp32 inputs cast to half on the way in and
    half outputs cast back to fp32 on the way out (nested tuples, lists and dicts included)."""

    def __init__(self, module: nn.Module):
        super().__init__()
        self.add_module("module", module.half())

    def forward(self, *inputs, **kwargs):
        inputs, kwargs = _to(torch.float32, torch.float16, (inputs, kwargs))
        return _to(torch.float16, torch.float32, self.module(*inputs, **kwargs))

    def state_dict(self, *args, **kwargs):
        return self.module.state_dict(*args, **kwargs)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        return self.module.load_state_dict(state_dict, strict=strict, assign=assign)


def verify(actual: Any, expected: Any, atol: float = ATOL, rtol: float = 0.0, where: str = "value") -> None:
    """Raise AssertionError naming the first place where `actual` and `expected` differ: tensors beyond
    atol/rtol (or of another shape), other values unequal; tuples, lists and dicts are walked."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict) or set(actual) != set(expected):
            raise AssertionError(f"{where}: keys {sorted(map(str, actual))} != {sorted(map(str, expected))}"
                                 if isinstance(actual, dict) else f"{where}: {type(actual).__name__} is not a dict")
        for key in expected:
            verify(actual[key], expected[key], atol, rtol, f"{where}[{key!r}]")
    elif isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            raise AssertionError(f"{where}: {actual!r:.80} has not the {len(expected)} items expected")
        for i, (a, e) in enumerate(zip(actual, expected)):
            verify(a, e, atol, rtol, f"{where}[{i}]")
    elif isinstance(expected, torch.Tensor):
        if not isinstance(actual, torch.Tensor) or actual.shape != expected.shape:
            raise AssertionError(f"{where}: shape {getattr(actual, 'shape', type(actual).__name__)} != "
                                 f"{tuple(expected.shape)}")
        a, e = actual.detach().float().cpu(), expected.detach().float().cpu()
        if not torch.allclose(a, e, atol=atol, rtol=rtol):
            raise AssertionError(f"{where}: max |difference| {(a - e).abs().max().item():.3g} > atol {atol}")
    elif actual != expected:
        raise AssertionError(f"{where}: {actual!r} != {expected!r}")


def dump_model(model: nn.Module, path: str | Path | None = None) -> dict[str, torch.Tensor]:
    """Every parameter and buffer of `model` (a DistributedModel or a module) as whole CPU tensors by name
    (tensor-parallel shards gathered: a collective over the tp group); saved with torch.save when `path` is given."""
    dumped = {name: full_value(value).detach().cpu() for name, value in model.state_dict().items()
              if isinstance(value, torch.Tensor)}
    if path is not None:
        torch.save(dumped, path)
    return dumped


def add_num_grads_hook(model: nn.Module) -> tuple[dict[str, int], list]:
    """Count the gradients each parameter receives: ({name: count}, the hook handles to remove)."""
    counts: dict[str, int] = {}
    handles = []
    for name, param in model.named_parameters():
        if param.requires_grad:
            counts[name] = 0

            def count(grad, name=name):
                counts[name] += 1
                return grad

            handles.append(param.register_hook(count))
    return counts, handles
