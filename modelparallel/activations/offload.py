"""offload_activations with activation_loading_horizon: autograd saved_tensors_hooks that keep the activations
saved for backward in (pinned) CPU memory and bring them back to the device at most `horizon` modules ahead.

Why not torch.autograd.graph.save_on_cpu: it copies every tensor back synchronously at the moment backward
unpacks it, so the host→device copy never overlaps compute and there is no horizon to honour. Here:
- forward: every module of the model's layer stack (the checkpointed modules if smp.set_activation_checkpointing
  was used, else the children of the largest nn.Sequential/nn.ModuleList) opens a new "group" each time it runs;
  tensors autograd saves inside it are copied to pinned CPU memory with non_blocking copies on the current stream.
- backward: the first unpack of group g makes g resident (waiting for its prefetch or copying now), then
  prefetches groups g-1 … g-horizon on a side stream, never holding more than `horizon` resident groups ahead of
  the current one. A group is dropped from the device once all its tensors were unpacked.
Saved tensors outside the layer stack are offloaded too and fetched when unpacked (save_on_cpu's behaviour).
Parameters and tensor subclasses (DTensor) stay where they are: they are not activations or cannot be copied
into a plain pinned buffer. Checkpointed modules: torch's checkpoint hooks are innermost inside them and keep
nothing, but the checkpoint saves the module's inputs (for the recompute) with the hooks around it, i.e. ours —
exactly what SMP offloads. So a module's group opens before its checkpoint does (our pre-hook is prepended) and
the grouped checkpoint regions of "contiguous"/"group_N" open one with checkpoint_region(); backward's recompute
unpacks those inputs through the same horizon schedule.
On CPU the copies are no-ops but the same scheduling runs (its counters are what the tests check).
"""

from __future__ import annotations

import contextlib
import itertools
import weakref
from typing import Any, Iterable, Iterator

import torch
import torch.nn as nn

from sagelaunch.modelparallel.errors import SMPValidationError


class _Group:
    """The saved tensors of one run of one module: on the host, and on the device once fetched."""

    __slots__ = ("gid", "host", "device", "event", "packed", "unpacked", "__weakref__")

    def __init__(self, gid: int) -> None:
        self.gid = gid
        self.host: list[torch.Tensor] = []
        self.device: list[torch.Tensor] | None = None
        self.event: torch.cuda.Event | None = None
        self.packed = 0
        self.unpacked: set[int] = set()


class _Handle:
    """What autograd stores instead of the tensor: keeps its group alive while the graph needs it."""

    __slots__ = ("group", "index")

    def __init__(self, group: _Group, index: int) -> None:
        self.group, self.index = group, index


_OPEN: list["ActivationOffloader"] = []  # the offloader whose context is open, for checkpoint_region()


@contextlib.contextmanager
def checkpoint_region() -> Iterator[None]:
    """One schedule group around a torch.utils.checkpoint call (a region that is no module of its own)."""
    offloader = _OPEN[-1] if _OPEN else None
    if offloader is None:
        yield
        return
    offloader._enter(None, ())
    try:
        yield
    finally:
        offloader._leave(None, (), None)


def layer_stack(module: nn.Module) -> list[nn.Module]:
    """The modules whose activations are scheduled: the checkpointed ones, else the longest layer list."""
    marked = [m for m in module.modules() if getattr(m, "_smp_checkpointed", False)]
    regions = any(getattr(m, "_smp_checkpoint_regions", False) for m in module.modules())
    if marked or regions:  # checkpointed regions open their own groups (checkpoint_region)
        return marked
    stacks = [m for m in module.modules() if isinstance(m, (nn.Sequential, nn.ModuleList))]
    if not stacks:
        return list(module.children())
    return list(max(stacks, key=len).children())


class ActivationOffloader:
    def __init__(self, device: torch.device, horizon: int) -> None:
        if horizon < 1:
            raise SMPValidationError(f"activation_loading_horizon={horizon} must be ≥ 1", field="activation_loading_horizon",
                                     value=horizon, allowed="≥ 1", fix="set it to 1 or more")
        self.device, self.horizon = torch.device(device), horizon
        self.cuda = self.device.type == "cuda"
        if self.cuda and self.device.index is None:  # compare like tensors' devices, which carry an index
            self.device = torch.device("cuda", torch.cuda.current_device())
        self.stream = torch.cuda.Stream(self.device) if self.cuda else None
        self._ids = itertools.count()
        self._groups: "weakref.WeakValueDictionary[int, _Group]" = weakref.WeakValueDictionary()
        self._resident: dict[int, _Group] = {}  # fetched to the device, not yet fully unpacked
        self._stack: list[_Group] = []
        self._loose: _Group | None = None
        self._hooked: list = []
        self._active = False
        self.current: int | None = None
        # what the scheduling did (read by tests and the benchmark)
        self.stats = {"groups": 0, "prefetched": 0, "fetched_on_demand": 0, "max_resident_ahead": 0,
                      "packed": 0, "packed_bytes": 0, "host_on_cpu": 0, "kept_bytes": 0}

    # ----- which module is running
    def attach(self, modules: Iterable[nn.Module]) -> None:
        for m in modules:
            if getattr(m, "_smp_offload_unit", False):
                continue
            # prepended: the group must be open before a checkpoint's pre-hook saves the module's inputs
            self._hooked.append(m.register_forward_pre_hook(self._enter, prepend=True))
            self._hooked.append(m.register_forward_hook(self._leave, always_call=True))
            m._smp_offload_unit = True

    def _enter(self, module: nn.Module | None, args: tuple[Any, ...]) -> None:
        if self._running():
            group = _Group(next(self._ids))
            self._groups[group.gid] = group
            self._stack.append(group)
            self.stats["groups"] += 1

    def _leave(self, module: nn.Module, args: tuple[Any, ...], output: Any) -> None:
        if self._running() and self._stack:
            self._stack.pop()

    def _running(self) -> bool:
        """A forward that saves for backward; not a checkpoint's recompute during backward (it saves nothing here)."""
        return self._active and torch.is_grad_enabled() and torch._C._current_graph_task_id() == -1

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        """Forward passes inside this context offload what autograd saves."""
        if self._active:  # nested (a pipeline run around the model's forward): one context is enough
            yield
            return
        self._active = True
        _OPEN.append(self)
        try:
            with torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack):
                yield
        finally:
            _OPEN.remove(self)
            self._active, self._stack, self._loose = False, [], None

    # ----- pack / unpack
    def _pack(self, t: torch.Tensor) -> torch.Tensor | _Handle:
        if isinstance(t, nn.Parameter):
            return t  # weights stay where they are anyway
        if type(t) is not torch.Tensor or t.device != self.device:
            local = getattr(t, "_local_tensor", t)  # DTensors and tensors of other devices are not offloaded
            self.stats["kept_bytes"] += local.numel() * local.element_size()
            return t
        if self._stack:
            group = self._stack[-1]
        else:  # outside the layer stack: its own group, fetched on demand
            group = _Group(-1)
        if self.cuda:
            host = torch.empty(t.size(), dtype=t.dtype, layout=t.layout, pin_memory=True)
            host.copy_(t, non_blocking=True)
        else:
            host = t  # the "copy" to CPU is a no-op here
        group.host.append(host)
        group.packed += 1
        self.stats["packed"] += 1
        self.stats["packed_bytes"] += t.numel() * t.element_size()
        self.stats["host_on_cpu"] += host.device.type == "cpu"
        return _Handle(group, len(group.host) - 1)

    def _unpack(self, handle: torch.Tensor | _Handle) -> torch.Tensor:
        if not isinstance(handle, _Handle):
            return handle
        group = handle.group
        if group.gid < 0:  # not part of the schedule
            self.stats["fetched_on_demand"] += 1
            return self._to_device(group.host[handle.index])
        switched = self.current != group.gid
        self.current = group.gid
        if group.device is None:
            self._fetch(group, prefetch=False)
            self.stats["fetched_on_demand"] += 1
        if switched:
            self._prefetch_before(group.gid)
        if group.event is not None:
            torch.cuda.current_stream(self.device).wait_event(group.event)
        assert group.device is not None, "fetched above, or by a prefetch"
        value = group.device[handle.index]
        if self.cuda:
            value.record_stream(torch.cuda.current_stream(self.device))
        group.unpacked.add(handle.index)
        if len(group.unpacked) == group.packed:  # every tensor used: free the device copies
            self._resident.pop(group.gid, None)
            group.device, group.event = None, None
            self._note_ahead()
        return value

    def _prefetch_before(self, gid: int) -> None:
        for prev in range(gid - 1, gid - self.horizon - 1, -1):
            if self._ahead_count() >= self.horizon:
                break
            group = self._groups.get(prev)
            if group is None or group.device is not None or len(group.unpacked) == group.packed:
                continue
            self._fetch(group, prefetch=True)
            self.stats["prefetched"] += 1

    def _fetch(self, group: _Group, prefetch: bool) -> None:
        if self.cuda and prefetch:
            assert self.stream is not None, "a side stream exists on CUDA"
            self.stream.wait_stream(torch.cuda.current_stream(self.device))  # the offload copies are done
            with torch.cuda.stream(self.stream):
                group.device = [self._to_device(h) for h in group.host]
                group.event = torch.cuda.Event()
                group.event.record(self.stream)
        else:
            group.device = [self._to_device(h) for h in group.host]
        self._resident[group.gid] = group
        self._note_ahead()

    def _to_device(self, host: torch.Tensor) -> torch.Tensor:
        return host.to(self.device, non_blocking=True) if self.cuda else host

    def _ahead_count(self) -> int:
        return sum(1 for gid in self._resident if gid != self.current)

    def _note_ahead(self) -> None:
        self.stats["max_resident_ahead"] = max(self.stats["max_resident_ahead"], self._ahead_count())

    def detach(self) -> None:
        for h in self._hooked:
            h.remove()
        self._hooked = []
