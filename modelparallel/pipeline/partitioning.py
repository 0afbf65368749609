"""Pipeline partitioning: which layers each pipeline stage runs (smp.partition marks or an even split), the stage
modules handed to torch.distributed.pipelining, and pruning the wrapped model to this rank's layers so that
local parameter names stay the original model's names."""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from sagelaunch.jobspec.smp import even_chunks
from sagelaunch.modelparallel.core import state
from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.pipeline.stack import LayerStackStages, find_layer_stack
from sagelaunch.modelparallel.pipeline.tree import TreeStages

MARK = "_smp_partition"
_stack: list[int] = []


@contextlib.contextmanager
def partition(index: int):
    """Modules assigned inside this context go to partition `index` (honoured when auto_partition is False)."""
    from torch.nn.modules.module import register_module_module_registration_hook

    if state.initialized and not 0 <= index < state.cfg.pipeline_parallel_degree:
        raise SMPValidationError(
            f"smp.partition({index}): index must be in 0..{state.cfg.pipeline_parallel_degree - 1} "
            f"(pipeline_parallel_degree={state.cfg.pipeline_parallel_degree})"
        )

    def mark(module, name, submodule):
        if submodule is not None and _stack:
            setattr(submodule, MARK, _stack[-1])

    _stack.append(index)
    handle = register_module_module_registration_hook(mark)
    try:
        yield
    finally:
        handle.remove()
        _stack.pop()


def set_partition(module, index: int) -> None:
    """SMP's smp.set_partition: place `module` (a layer of the model's layer stack, or an nn.Sequential child)
    on pipeline partition `index` (honoured when auto_partition is False)."""
    if state.initialized and not 0 <= index < state.cfg.pipeline_parallel_degree:
        raise SMPValidationError(
            f"smp.set_partition(..., {index}): index must be in 0..{state.cfg.pipeline_parallel_degree - 1} "
            f"(pipeline_parallel_degree={state.cfg.pipeline_parallel_degree})"
        )
    for m in module.modules():
        setattr(m, MARK, index)


def split_evenly(n_units: int, n_chunks: int) -> list[range]:
    if n_units < n_chunks:
        raise SMPValidationError(
            f"the model has {n_units} pipeline units (layers) but needs at least {n_chunks} for "
            f"{n_chunks} pipeline stages; lower pipeline_parallel_degree or use a deeper model"
        )
    return even_chunks(n_units, n_chunks)


def manual_chunks(units: list[tuple[str, Any]], pp: int, default_partition: int) -> list[range]:
    parts = [getattr(m, MARK, default_partition) for _, m in units]
    for (name, _), (prev_name, _), p, q in zip(units[1:], units, parts[1:], parts):
        if p < q:
            raise SMPValidationError(
                f"smp.partition: layer {name} is in partition {p} after {prev_name} in partition {q}; pipeline "
                "partitions must follow the order the layers run in"
            )
    chunks = []
    for stage in range(pp):
        idx = [i for i, p in enumerate(parts) if p == stage]
        if not idx:
            raise SMPValidationError(f"smp.partition: no layer is placed in partition {stage}; every stage needs one")
        chunks.append(range(idx[0], idx[-1] + 1))
    return chunks


class _SequentialStage:
    """Stage builder for an nn.Sequential: each stage is a Sequential of the same child modules (names kept)."""

    def __init__(self, root):
        self.root = root
        self.units = list(root.named_children())

    def make_stage(self, unit_range: range, first: bool, last: bool):
        import torch.nn as nn

        return nn.Sequential(OrderedDict(self.units[i] for i in unit_range))

    def prune(self, keep: set[int]) -> None:
        for i, (name, _) in enumerate(self.units):
            if i not in keep:
                del self.root._modules[name]

    def model_inputs(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        if kwargs:
            raise SMPValidationError(f"an nn.Sequential pipeline takes one positional input; got keywords {sorted(kwargs)}")
        return args, {}

    def finalize(self, output):
        return output


def splits_by_module_tree(module) -> bool:
    """Whether `module` is pipelined as a module tree (pipeline_tree.py), which looks at a sample of its inputs."""
    import torch.nn as nn

    return not isinstance(module, nn.Sequential) and find_layer_stack(module) is None


def stage_builder(module, sample: tuple[tuple, dict] | None = None):
    import torch.nn as nn

    if isinstance(module, nn.Sequential):
        return _SequentialStage(module)
    stack = find_layer_stack(module)
    if stack is not None:
        return LayerStackStages(module, *stack)

    return TreeStages(module, state.cfg.pipeline_parallel_degree if state.initialized else 2, sample)


@dataclass
class StagePlan:
    builder: Any
    stage_indices: list[int]  # global stage ids held by this rank
    num_stages: int
    modules: list[Any]  # stage nn.Modules, same order as stage_indices


def plan_stages(module, cfg, pp_rank: int, sample: tuple[tuple, dict] | None = None) -> StagePlan:
    """Build this rank's stage modules and prune `module` to them; `sample` (the model's arguments at the first
    step) lets a module tree without a layer stack find where it can be split."""
    builder = stage_builder(module, sample)
    pp = cfg.pipeline_parallel_degree
    n_units = len(builder.units)
    if cfg.auto_partition:
        virtual = 2 if cfg.pipeline == "interleaved" and n_units >= 2 * pp else 1
        chunks = builder.auto_chunks(pp * virtual) if hasattr(builder, "auto_chunks") else \
            split_evenly(n_units, pp * virtual)
    else:
        chunks = manual_chunks(builder.units, pp, cfg.effective_default_partition)
        if hasattr(builder, "check_chunks"):
            builder.check_chunks(chunks)
    num_stages = len(chunks)
    mine = [s for s in range(num_stages) if s % pp == pp_rank]  # looped placement: stage s on rank s % pp
    modules = [builder.make_stage(chunks[s], s == 0, s == num_stages - 1) for s in mine]
    keep = {i for s in mine for i in chunks[s]}
    if isinstance(builder, _SequentialStage):
        builder.prune(keep)
    else:
        builder.prune(keep, first=0 in mine, last=num_stages - 1 in mine)
    return StagePlan(builder, mine, num_stages, modules)
