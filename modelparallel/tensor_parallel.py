"""Tensor parallelism: which modules to distribute (smp.tensor_parallelism / set_tensor_parallelism marks) and the
DTensor plans that distribute them (`parallelize_module` with ColwiseParallel / RowwiseParallel).

Built-in plans:
- Hugging Face BERT/RoBERTa layers: attention.self.{query,key,value} and intermediate.dense column-wise,
  attention.output.dense and output.dense row-wise (Megatron layout: one all-reduce per block).
- nn.Sequential stacks of nn.Linear: consecutive Linear pairs (only parameter-free modules such as activations
  or dropout between them) become column-wise + row-wise.
"""

from __future__ import annotations

import contextlib
from typing import Any

from modelparallel.errors import SMPValidationError

MARK = "_smp_tensor_parallel"


@contextlib.contextmanager
def tensor_parallelism(enabled: bool = True, **tensor_parallel_config: Any):
    """Modules created inside are distributed over the tensor-parallel group when wrapped in DistributedModel."""
    from torch.nn.modules.module import register_module_module_registration_hook

    def mark(module, name, submodule):
        if submodule is not None:
            setattr(submodule, MARK, enabled)

    handle = register_module_module_registration_hook(mark)
    try:
        yield
    finally:
        handle.remove()


def set_tensor_parallelism(module, enabled: bool = True, **tensor_parallel_config: Any) -> None:
    """Mark (or unmark) `module` and its submodules for tensor parallelism."""
    for m in module.modules():
        setattr(m, MARK, enabled)


def _is_marked(module) -> bool:
    """Marked itself, or (the top-level module of a tensor_parallelism() block, which no parent registered)
    all of its children are."""
    if MARK in vars(module):
        return bool(vars(module)[MARK])
    children = list(module.children())
    return bool(children) and all(getattr(c, MARK, False) for c in children)


def _is_bert_layer(m) -> bool:
    att = getattr(m, "attention", None)
    return (att is not None and hasattr(getattr(att, "self", None), "query") and hasattr(m, "intermediate")
            and hasattr(getattr(m, "output", None), "dense"))


def _divisors(n: int) -> str:
    return ", ".join(str(d) for d in range(1, n + 1) if n % d == 0)


def _bert_layer_plan(name: str, layer, tp: int) -> dict[str, Any]:
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    heads = layer.attention.self.num_attention_heads
    inter = layer.intermediate.dense.out_features
    if heads % tp:
        raise SMPValidationError(
            f"tensor_parallel_degree={tp} does not divide num_attention_heads={heads} of {name or 'the layer'}; "
            f"allowed degrees: {_divisors(heads)}; change tensor_parallel_degree or the model's heads"
        )
    if inter % tp:
        raise SMPValidationError(
            f"tensor_parallel_degree={tp} does not divide intermediate_size={inter} of {name or 'the layer'}; "
            f"allowed degrees: {_divisors(inter)}"
        )
    p = f"{name}." if name else ""
    return {
        f"{p}attention.self.query": ColwiseParallel(),
        f"{p}attention.self.key": ColwiseParallel(),
        f"{p}attention.self.value": ColwiseParallel(),
        f"{p}attention.output.dense": RowwiseParallel(),
        f"{p}intermediate.dense": ColwiseParallel(),
        f"{p}output.dense": RowwiseParallel(),
    }


def _linear_stack_plan(name: str, seq, tp: int) -> dict[str, Any]:
    import torch.nn as nn
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    plan: dict[str, Any] = {}
    pending = None  # a Linear waiting for its row-wise partner
    for child_name, child in seq.named_children():
        full = f"{name}.{child_name}" if name else child_name
        if isinstance(child, nn.Linear):
            if pending is None:
                pending = (full, child)
                continue
            col_name, col = pending
            if col.out_features % tp:
                raise SMPValidationError(
                    f"tensor_parallel_degree={tp} does not divide out_features={col.out_features} of {col_name}; "
                    f"allowed degrees: {_divisors(col.out_features)}"
                )
            plan[col_name], plan[full] = ColwiseParallel(), RowwiseParallel()
            pending = None
        elif any(True for _ in child.parameters()):
            pending = None  # a module with parameters (e.g. LayerNorm) needs the full feature dim
    return plan


def build_plan(module, tp: int) -> dict[str, Any]:
    """The parallelize_module plan for every marked module we know how to distribute."""
    import torch.nn as nn

    plan: dict[str, Any] = {}
    covered: list[str] = []
    for name, m in module.named_modules():
        if not _is_marked(m) or any(name == c or name.startswith(c + ".") for c in covered):
            continue
        if _is_bert_layer(m):
            plan.update(_bert_layer_plan(name, m, tp))
            covered.append(name)
        elif isinstance(m, nn.Sequential):
            sub = _linear_stack_plan(name, m, tp)
            if sub:
                plan.update(sub)
                covered.append(name)
    return plan


def apply_tensor_parallel(module, tp_mesh, tp: int) -> dict[str, int | None]:
    """Distribute `module` in place; returns {parameter name: shard dim, or None if replicated DTensor}."""
    from torch.distributed.tensor import DTensor, Shard
    from torch.distributed.tensor.parallel import parallelize_module

    plan = build_plan(module, tp)
    if not plan:
        return {}
    parallelize_module(module, tp_mesh, plan)
    for name, m in module.named_modules():
        if _is_bert_layer(m) and (f"{name}.attention.self.query" if name else "attention.self.query") in plan:
            att = m.attention.self
            att.num_attention_heads //= tp  # the local heads; HF reshapes with -1 but keep attributes truthful
            if hasattr(att, "all_head_size"):
                att.all_head_size //= tp
    specs: dict[str, int | None] = {}
    for name, p in module.named_parameters():
        if isinstance(p, DTensor):
            placement = p.placements[0]
            specs[name] = placement.dim if isinstance(placement, Shard) else None
    return specs
