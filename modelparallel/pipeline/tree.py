"""Pipeline stages for any module tree (SMP v1 partitions by module): the units are modules of the tree in the order
the model runs them, each stage a contiguous run of units, and every stage runs the root model's own forward, so the
functional code between modules (F.relu, flatten, masks, losses) runs where it falls, unchanged.

- The units: the root's children, the one holding the most parameters split into its children while it holds more
  than a stage's share (a nested nn.Sequential encoder becomes its layers); auto-partition balances parameters over
  the stages, smp.partition / smp.set_partition place units by hand.
- On stage k the units of other stages are parameter-free twins: copies on the meta device that give their output's
  shape, filled with zeros before this stage's first unit runs. That first unit's inputs (every tensor of its args and
  keyword args) are replaced by the ones the previous stage sent; the stage ends when the next stage's first unit is
  about to run, sending that unit's inputs. The model's tensor inputs (input_ids, labels, masks) travel along, so each
  stage recomputes what it derives from them.
- What cannot be pipelined this way is refused by name: a later stage whose result still depends on what earlier
  stages computed other than through the boundary module's inputs (a residual across the boundary, a value kept in
  the forward), or whose boundary module does not run when the earlier modules' outputs change (data-dependent control
  flow across partitions). Each stage checks this once, on its first forward, by running with the twins' outputs
  filled with zeros and with ones: the results must be the same.
"""

from __future__ import annotations

import contextlib
import copy
import torch
import torch.nn as nn
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.pipeline.stack import RootCallStages


def _params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def tree_units(root: nn.Module, stages: int) -> list[tuple[str, nn.Module]]:
    """The pipeline units of `root` for `stages` stages (see the module doc), in definition order."""
    units = [(name, m) for name, m in root.named_children() if _params(m)]
    share = _params(root) / max(stages, 1)
    while True:
        big = [i for i, (_, m) in enumerate(units) if _params(m) > share and any(_params(c) for c in m.children())]
        if not big and len(units) >= stages:
            return units
        if not big:  # too few units for the stages: split the largest one that can be split
            big = [i for i, (_, m) in enumerate(units) if any(_params(c) for c in m.children())]
            if not big:
                return units
        i = max(big, key=lambda j: _params(units[j][1]))
        name, module = units[i]
        units[i:i + 1] = [(f"{name}.{child}", c) for child, c in module.named_children() if _params(c)]


def balanced_chunks(sizes: list[int], parts: int) -> list[range]:
    """`parts` contiguous, non-empty runs of `sizes` whose largest total is as small as it can be."""
    n = len(sizes)
    if n < parts:
        raise SMPValidationError(
            f"the model has {n} pipeline units (modules with parameters) but needs at least {parts} for {parts} "
            "pipeline stages; lower pipeline_parallel_degree (or use pipeline='simple'), or split the model into "
            "more modules")
    prefix = [0]
    for size in sizes:
        prefix.append(prefix[-1] + size)
    inf = float("inf")
    best = [[inf] * (n + 1) for _ in range(parts + 1)]
    cut = [[0] * (n + 1) for _ in range(parts + 1)]
    best[0][0] = 0
    for k in range(1, parts + 1):
        for end in range(k, n + 1):
            for start in range(k - 1, end):
                cost = max(best[k - 1][start], prefix[end] - prefix[start])
                if cost < best[k][end]:
                    best[k][end], cut[k][end] = cost, start
    bounds, end = [], n
    for k in range(parts, 0, -1):
        bounds.append(range(cut[k][end], end))
        end = cut[k][end]
    return bounds[::-1]


class _StageEnd(Exception):
    def __init__(self, tensors: list):
        super().__init__("pipeline stage end")
        self.tensors = tensors


class _Twin(nn.Module):
    """A unit that runs on another stage: its output's shape from a copy on the meta device (no parameters, no
    memory), as a tensor filled with `fill`; mode "end" stops the stage (the next stage starts here), mode "beyond"
    means control flow reached a later stage's module before this stage ended."""

    def __init__(self, name: str, module: nn.Module):
        super().__init__()
        self.unit_name = name
        meta = copy.deepcopy(module).to("meta")
        for p in meta.parameters():
            p.requires_grad_(False)
        self._meta = [meta]  # not registered: the twin has no parameters or state
        self.mode, self.fill = "zeros", 0.0

    def __getattr__(self, name: str):
        """The model may read a module's attributes from outside it (BERT: the word embeddings' dtype): the meta
        copy's (shapes and dtypes; reading values fails, so no stage starts where a later one would need them)."""
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "_meta":
                raise
            return getattr(self._meta[0], name)

    def forward(self, *args, **kwargs):
        if self.mode == "end":
            raise _StageEnd(tree_flatten((args, kwargs))[0])
        if self.mode == "beyond":
            raise SMPValidationError(
                f"pipeline: {self.unit_name} (a later stage's module) ran before this stage's modules were done: the "
                "model does not run its modules in the order they are defined; place them with smp.partition / "
                "smp.set_partition (auto_partition=False) in the order they run")
        device = next((t.device for t in tree_flatten((args, kwargs))[0] if isinstance(t, torch.Tensor)), None)
        on_meta = tree_map(lambda t: t.to("meta") if isinstance(t, torch.Tensor) else t, (args, kwargs))
        with torch.no_grad():
            out = self._meta[0](*on_meta[0], **on_meta[1])
        return tree_map(lambda t: torch.full(t.shape, self.fill, dtype=t.dtype, device=device)
                        if isinstance(t, torch.Tensor) else t, out)


class _TreeStage(nn.Module):
    def __init__(self, builder: "TreeStages", index_range: range, first: bool, last: bool):
        super().__init__()
        self._builder = [builder]  # not registered: the root runs, the stage owns its units' parameters
        self.index_range, self.first, self.last = index_range, first, last
        self.owned = nn.ModuleList(builder.modules[i] for i in index_range)
        self._checked = first or builder.verified()  # boundaries found on a sample need no check per stage

    @contextlib.contextmanager
    def _running(self, carried: tuple, fill: float):
        builder = self._builder[0]
        start, stop = self.index_range.start, self.index_range.stop
        for i, (name, _) in enumerate(builder.units):
            if i in self.index_range:
                builder.place(name, builder.modules[i])
            else:
                twin = builder.twins[i]
                twin.mode = "zeros" if i < start else ("end" if i == stop else "beyond")
                twin.fill = fill
                builder.place(name, twin)
        swapped: list[bool] = []
        handles = []
        if not self.first:
            def swap_in(module, args, kwargs):
                flat, spec = tree_flatten((args, kwargs))
                tensors = iter(carried)
                flat = [next(tensors) if isinstance(t, torch.Tensor) else t for t in flat]
                swapped.append(True)
                return tree_unflatten(flat, spec)

            handles.append(builder.modules[start].register_forward_pre_hook(swap_in, with_kwargs=True, prepend=True))
        try:
            yield swapped
        finally:
            for h in handles:
                h.remove()
            for i, (name, _) in enumerate(builder.units):
                builder.place(name, builder.modules[i] if builder.kept(i) else builder.twins[i])

    def _run(self, carried: tuple, tensors: tuple, fill: float = 0.0) -> tuple:
        builder = self._builder[0]
        kwargs = {**dict(zip(builder.input_names, tensors)), **builder.static_kwargs}
        first_name = builder.units[self.index_range.start][0]
        with self._running(carried, fill) as swapped:
            try:
                out = builder.root(**kwargs)
            except _StageEnd as end:
                out = None
                result = (*[t for t in end.tensors if isinstance(t, torch.Tensor)], *tensors)
            if not self.first and not swapped:
                raise SMPValidationError(
                    f"pipeline: {first_name}, the first module of a stage, did not run: whether it runs depends on "
                    "values computed on an earlier stage (data-dependent control flow across partitions); make the "
                    "decision from the model's inputs, or keep the modules involved in one partition "
                    "(smp.partition / smp.set_partition)")
        if out is not None:
            if not self.last:
                raise SMPValidationError(
                    f"pipeline: the model returned before {builder.units[self.index_range.stop][0]}, the next "
                    "stage's first module, ran (data-dependent control flow across partitions); keep the modules "
                    "involved in one partition (smp.partition / smp.set_partition)")
            return builder.output_tensors(out)
        return result

    def _check_boundary(self, carried: tuple, tensors: tuple) -> None:
        """Run once with the other stages' outputs as zeros and as ones: the results must not change."""
        results = []
        for fill in (0.0, 1.0):
            with torch.random.fork_rng(devices=[t.device for t in tensors if t.is_cuda][:1]), torch.no_grad():
                results.append(self._run(carried, tensors, fill))
        same = len(results[0]) == len(results[1]) and all(
            torch.equal(a, b) or (a.is_floating_point() and torch.allclose(a, b, equal_nan=True))
            for a, b in zip(*results))
        if not same:
            name = self._builder[0].units[self.index_range.start][0]
            raise SMPValidationError(
                f"pipeline: the stage starting at {name} depends on values computed before it other than {name}'s "
                "own inputs (for example a residual connection or a value kept across the boundary): the model "
                f"cannot be split at {name}. Partition at a module whose inputs carry everything the later modules "
                "need (smp.partition / smp.set_partition with auto_partition=False), or keep these modules in one "
                "partition")

    def forward(self, *inputs):
        builder = self._builder[0]
        n_carried = len(inputs) - len(builder.input_names)
        carried, tensors = tuple(inputs[:n_carried]), tuple(inputs[n_carried:])
        if not self._checked:
            self._check_boundary(carried, tensors)
            self._checked = True
        return self._run(carried, tensors)


class TreeStages(RootCallStages):
    """Stage builder (see partitioning.stage_builder) for a module tree without a layer stack."""

    def __init__(self, root: nn.Module, stages: int, sample: tuple[tuple, dict] | None = None):
        super().__init__(root)
        self.units = tree_units(root, stages)
        self.modules = [m for _, m in self.units]
        self.twins = [_Twin(name, m) for name, m in self.units]
        self._kept: set[int] = set(range(len(self.units)))
        # where a stage may start: every unit without a sample of the model's inputs (each stage then checks its
        # own boundary on its first forward); with one, only where splitting gives the unsplit model's result
        self.safe: set[int] | None = None
        if sample is not None:
            self._analyse(*sample)
        in_units = {id(p) for m in self.modules for p in m.parameters()}
        outside = [n for n, p in root.named_parameters() if id(p) not in in_units]
        if outside:
            raise SMPValidationError(
                f"pipeline_parallel_degree > 1: {type(root).__name__}'s parameters {outside[:3]} belong to no "
                "submodule, so no pipeline stage can hold them; move them into a submodule or set "
                "pipeline_parallel_degree=1")
        self.find_tied()  # a parameter shared by units of different stages: a copy on each, gradients summed

    def _forward(self, args: tuple, kwargs: dict):
        with torch.random.fork_rng(devices=[]), torch.no_grad():  # the same random numbers (dropout) every run
            return self.root(*args, **kwargs)

    def _analyse(self, args: tuple, kwargs: dict) -> None:
        """Put the units in the order the model runs them, and find where a stage may start: unit i is a safe
        start when the model's result, with every earlier unit's output replaced by ones and unit i given the inputs
        it really gets, is the unsplit result (nothing else computed before i is used after it)."""
        calls: dict[int, list] = {}

        def recorder(i):
            def hook(module, hook_args, hook_kwargs):
                flat = tree_flatten((hook_args, hook_kwargs))[0]
                calls.setdefault(i, []).append([t.detach().clone() for t in flat if isinstance(t, torch.Tensor)])
            return hook

        handles = [m.register_forward_pre_hook(recorder(i), with_kwargs=True) for i, m in enumerate(self.modules)]
        try:
            reference = tree_flatten(self._forward(args, kwargs))[0]
        finally:
            for h in handles:
                h.remove()
        order = sorted(range(len(self.units)), key=lambda i: (i not in calls, list(calls).index(i) if i in calls
                                                                else i))
        self.units = [self.units[i] for i in order]
        self.modules = [self.modules[i] for i in order]
        self.twins = [self.twins[i] for i in order]
        inputs = [calls.get(i) for i in order]
        self.safe = set()
        for i in range(1, len(self.units)):
            seen = inputs[i]
            if seen is None or len(seen) != 1:
                continue  # not run, or run more than once: no stage can start there
            if self._split_result(i, seen[0], args, kwargs, reference):
                self.safe.add(i)

    def _split_result(self, start: int, carried: list, args: tuple, kwargs: dict, reference: list) -> bool:
        """Whether the model gives `reference` with the units before `start` replaced by zeros and by ones (a value
        they computed used past `start`, or a branch on them, changes it) and `start` given its real inputs."""
        return all(self._split_result_with(fill, start, carried, args, kwargs, reference) for fill in (0.0, 1.0))

    def _split_result_with(self, fill: float, start: int, carried: list, args: tuple, kwargs: dict,
                           reference: list) -> bool:
        for i in range(start):
            self.twins[i].mode, self.twins[i].fill = "zeros", fill
            self.place(self.units[i][0], self.twins[i])

        def swap_in(module, hook_args, hook_kwargs):
            flat, spec = tree_flatten((hook_args, hook_kwargs))
            tensors = iter(carried)
            return tree_unflatten([next(tensors) if isinstance(t, torch.Tensor) else t for t in flat], spec)

        handle = self.modules[start].register_forward_pre_hook(swap_in, with_kwargs=True, prepend=True)
        try:
            out = tree_flatten(self._forward(args, kwargs))[0]
        except Exception:  # noqa: BLE001  (the model breaks on the replaced values: not a place to split)
            return False
        finally:
            handle.remove()
            for i in range(start):
                self.place(self.units[i][0], self.modules[i])
        return len(out) == len(reference) and all(
            torch.equal(a, b) if isinstance(a, torch.Tensor) else a is b or type(a) is type(b)
            for a, b in zip(out, reference))

    def auto_chunks(self, parts: int) -> list[range]:
        """Stages balanced by parameters, starting only where the model can be split."""
        sizes = [_params(m) for m in self.modules]
        if self.safe is None:
            return balanced_chunks(sizes, parts)
        starts = [0, *sorted(self.safe)]
        segments = [range(a, b) for a, b in zip(starts, [*starts[1:], len(sizes)])]
        if len(segments) < parts:
            unsafe = [self.units[i][0] for i in range(1, len(self.units)) if i not in self.safe]
            raise SMPValidationError(
                f"pipeline_parallel_degree > 1: {type(self.root).__name__} has {len(segments)} place(s) to split for "
                f"{parts} stages: no stage can start at {unsafe} (later modules use values computed before each "
                "other than through its inputs, e.g. a residual connection, or whether it runs depends on them: "
                "data-dependent control flow). Pass such values through the modules' inputs and outputs, keep the "
                "branch's decision on the model's inputs, or lower pipeline_parallel_degree")
        grouped = balanced_chunks([sum(sizes[i] for i in seg) for seg in segments], parts)
        return [range(segments[g.start].start, segments[g.stop - 1].stop) for g in grouped]

    def check_chunks(self, chunks: list[range]) -> None:
        """Refuse, by module, a manual partition that starts a stage where the model cannot be split."""
        if self.safe is None:
            return
        for chunk in chunks[1:]:
            if chunk.start not in self.safe:
                name = self.units[chunk.start][0]
                raise SMPValidationError(
                    f"pipeline: a stage cannot start at {name}: the model uses values computed before {name} after it "
                    "other than through its inputs (a residual connection, a value kept across), or whether it runs "
                    "depends on them; place the modules around it in one partition (smp.partition / "
                    f"smp.set_partition); stages may start at {[self.units[i][0] for i in sorted(self.safe)]}")

    def verified(self) -> bool:
        return self.safe is not None

    def kept(self, i: int) -> bool:
        return i in self._kept

    def place(self, name: str, module: nn.Module) -> None:
        parent_name, _, attr = name.rpartition(".")
        parent = self.root.get_submodule(parent_name) if parent_name else self.root
        parent._modules[attr] = module

    def make_stage(self, unit_range: range, first: bool, last: bool):
        return _TreeStage(self, unit_range, first, last)

    def prune(self, keep: set[int], first: bool, last: bool) -> None:
        self._kept = set(keep)
        for i, (name, _) in enumerate(self.units):
            if i not in keep:
                self.place(name, self.twins[i])
