"""Tensor parallelism: which modules to distribute (smp.tensor_parallelism / set_tensor_parallelism marks),
distributing them with DTensor (`parallelize_module` with the plans of tp_plans.py), and refusing a
tensor_parallel_degree > 1 that would distribute nothing (the ranks would silently run as replicas)."""

from __future__ import annotations

import contextlib
from collections import Counter
from typing import Any

from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.tensor.delayed_init import is_delayed, materialize, shard_points
from sagelaunch.modelparallel.tensor.smp_init import initialize_distributed_transformer
from sagelaunch.modelparallel.tensor.tp_marks import MARK, is_marked  # noqa: F401  (is_marked: part of this module's API)
from sagelaunch.modelparallel.tensor.tp_plans import build_plan  # the plan distribute_module applies


@contextlib.contextmanager
def tensor_parallelism(enabled: bool = True, **tensor_parallel_config: Any):
    """Modules created inside are distributed over the tensor-parallel group when wrapped in DistributedModel. A
    Hugging Face transformer SMP would build its distributed transformer for gets SMP's weight initialisation when
    it is built (smp_init.py), so weights loaded afterwards (from_pretrained) are kept."""
    from torch.nn.modules.module import register_module_module_registration_hook

    def mark(module, name, submodule):
        if submodule is not None:
            setattr(submodule, MARK, enabled)
            if enabled:
                initialize_distributed_transformer(module, name, submodule)

    handle = register_module_module_registration_hook(mark)
    try:
        yield
    finally:
        handle.remove()


def set_tensor_parallelism(module, enabled: bool = True, **tensor_parallel_config: Any) -> None:
    """Mark (or unmark) `module` and its submodules for tensor parallelism."""
    for m in module.modules():
        setattr(m, MARK, enabled)


def _nothing_to_distribute(module, tp: int) -> SMPValidationError:
    counts = Counter(type(m).__name__ for m in module.modules()
                     if any(True for _ in m.parameters(recurse=False)))
    found = ", ".join(f"{name} x{n}" for name, n in counts.most_common()) or "none"
    marked = any(getattr(m, MARK, False) for m in module.modules())
    return SMPValidationError(
        f"tensor_parallel_degree={tp}, but smp.DistributedModel found nothing to distribute in "
        f"{type(module).__name__} (modules with parameters: {found}; "
        f"{'some are' if marked else 'none is'} marked for tensor parallelism). The ranks would run as "
        "replicas. Distributable: Hugging Face BERT/RoBERTa layers, GPT-2 blocks (Conv1D), Hugging Face models "
        "with a base_model_tp_plan (Llama, GPT-NeoX, GPT-J, ...), smp.nn.DistributedTransformer* layers and "
        "nn.Sequential stacks of nn.Linear pairs, created inside smp.tensor_parallelism() or marked with "
        "smp.set_tensor_parallelism(module); or set tensor_parallel_degree=1"
    )


def distribute_module(module, tp_mesh, tp: int, device) -> dict[str, int | None]:
    """Distribute `module` in place (materialising it first, layer by layer, when it was built on the meta device
    by smp.delay_param_initialization); returns {parameter name: shard dim, or None if replicated DTensor}.
    Raises SMPValidationError when nothing in `module` can be distributed."""
    from torch.distributed.tensor import DTensor, Shard
    from torch.distributed.tensor.parallel import parallelize_module
    from torch.distributed.tensor.placement_types import _StridedShard

    plan = build_plan(module, tp)
    if not plan.styles:
        raise _nothing_to_distribute(module, tp)
    shared = shared_parameters(module)
    if is_delayed(module):
        points = shard_points(plan.styles, module)

        def shard(name, m):
            if name in points:
                styles = points[name]
                parallelize_module(m, tp_mesh, styles.get("") or styles)

        materialize(module, device, shard)
    else:
        parallelize_module(module, tp_mesh, plan.styles)
    retie(shared)
    plan.localize_heads(tp)
    specs: dict[str, int | None] = {}
    for name, p in module.named_parameters():
        if isinstance(p, DTensor):
            placement = p.placements[0]
            specs[name] = placement.dim if isinstance(placement, (Shard, _StridedShard)) else None
            if specs[name] is not None:
                p.register_post_accumulate_grad_hook(_shard_gradient)
    return specs


def shared_parameters(module) -> list[list[tuple[Any, str]]]:
    """[(module, attribute), ...] for each parameter the model ties (held by several modules): Hugging Face's
    _tied_weights_keys, e.g. an LM head's weight and the word embeddings, BERT's MLM decoder.bias and
    cls.predictions.bias. In module order."""
    holders: dict[int, list[tuple[Any, str]]] = {}
    for m in module.modules():
        for attr, p in m._parameters.items():
            if p is not None:
                holders.setdefault(id(p), []).append((m, attr))
    return [group for group in holders.values() if len(group) > 1]


def retie(shared: list[list[tuple[Any, str]]]) -> None:
    """parallelize_module gives each distributed module its own DTensor, untying what the model tied: every holder
    takes the last distributed one in module order (a tied LM head's, which Hugging Face ties last; the decoder's
    sharded bias), so a tie stays one parameter, sharded, with one gradient."""
    from torch.distributed.tensor import DTensor

    for group in shared:
        distributed = [getattr(m, attr) for m, attr in group if isinstance(getattr(m, attr), DTensor)]
        if distributed:
            for m, attr in group:
                setattr(m, attr, distributed[-1])


def _shard_gradient(param) -> None:
    """A vocab-parallel embedding's gradient arrives replicated (the whole matrix on every rank): keep only this
    rank's rows, as the parameter (a local slice, no communication)."""
    if param.grad.placements != param.placements:
        param.grad = param.grad.redistribute(param.device_mesh, param.placements)
