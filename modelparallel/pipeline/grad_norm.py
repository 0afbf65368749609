"""A pipelined model's global gradient norm: each stage holds only its own parameters' gradients, so the stages'
squared norms are summed over the pipeline group, as SMP v1's FusedLAMB does before it clips (it all-gathers every
pp rank's norm: smdistributed-modelparallel's torch/optimizers/fused_lamb.py, step). A parameter tied across stages
(a copy on each, their gradients summed) is counted once: each holder adds 1/holders of its square."""

from __future__ import annotations

import weakref
from typing import Any, Iterable

import torch
import torch.distributed as dist

from sagelaunch.modelparallel.core import state

_holder_weights: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _tied_weights(model: Any) -> dict[int, float]:
    """1/holders by id of this stage's copies of parameters tied across stages (a collective over the pp group, once
    per model)."""
    if model in _holder_weights:
        return _holder_weights[model]
    weights: dict[int, float] = {}
    builder = getattr(model.stage_plan, "builder", None)
    if builder is not None and getattr(builder, "tied", None):
        own = dict(builder.root.named_parameters(remove_duplicate=False))
        for names in builder.tied:
            held = next((own[n] for n in names if n in own), None)
            holders = torch.tensor([0.0 if held is None else 1.0], device=state.device)
            dist.all_reduce(holders, group=state.groups["pp"])
            if held is not None:
                weights[id(held)] = 1.0 / float(holders.item())
    _holder_weights[model] = weights
    return weights


def global_grad_norm(params: Iterable[torch.Tensor]) -> torch.Tensor:
    """The L2 norm of the gradients of `params` (those with one) over the whole model: this rank's alone unless
    the model is pipelined, then summed over its stages."""
    with_grads = [p for p in params if p.grad is not None]
    model = state.model if state.cfg is not None else None
    pipelined = model is not None and model.pipelined and model.stage_plan is not None
    weights = _tied_weights(model) if pipelined else {}
    squares = [torch.linalg.vector_norm(p.grad.float()) ** 2 * weights.get(id(p), 1.0) for p in with_grads]
    device = with_grads[0].grad.device if with_grads else (state.device if pipelined else torch.device("cpu"))
    total = torch.stack(squares).sum() if squares else torch.zeros((), device=device)
    if pipelined:
        dist.all_reduce(total, group=state.groups["pp"])
    return total.sqrt()
