"""What a training loop does without annotations, seen through torch's own hooks (only when the script imported torch).

- every ``optimizer.step()``: torch's global optimizer step pre/post hooks
  (``torch.optim.optimizer.register_optimizer_step_pre_hook``), one ``optimizer.step`` span each: the analysis
  finds steps with them when the script annotates none;
- every batch a DataLoader hands out: ``_BaseDataLoaderIter.__next__`` wrapped (torch has no public hook there; it
  is the method torch's own profiler marks as ``enumerate(DataLoader)#…``), one ``DataLoader.__next__`` span each:
  the analysis measures the input wait with them, between steps and inside them;
- the process's memory after each optimizer step (or each outermost annotation when no optimizer steps), at most
  every ``SAMPLE_EVERY_NS``: resident set size (psutil) and, once the script has initialised CUDA, the caching
  allocator's allocated and reserved bytes of the current device.

All of it is undone at ``stop_profiling()``. A DataLoader worker process records nothing (profiler/api.py forgets
the session in forked children).
"""

from __future__ import annotations

import sys

from sagelaunch.profiler.recorder import AnnotationRecorder, now_ns
from sagelaunch.profiler.schema import (
    HOOK_DATALOADER_NEXT,
    HOOK_OPTIMIZER_STEP,
    SAMPLE_CUDA_ALLOCATED,
    SAMPLE_CUDA_RESERVED,
    SAMPLE_RSS,
)

SAMPLE_EVERY_NS = 10_000_000  # 10 ms: one sample per step for steps that long, a bounded cost for shorter ones


class TorchHooks:
    def __init__(self, recorder: AnnotationRecorder, active=lambda: True) -> None:
        import psutil
        import torch

        self.torch = torch
        self.recorder = recorder
        self.active = active  # the session's state: nothing is recorded after a failure stopped it
        self._process = psutil.Process()
        self._opt_start: int | None = None
        self._last_sample = 0
        self.optimizer_steps = 0
        from torch.optim import optimizer
        from torch.utils.data import dataloader

        self._handles = [optimizer.register_optimizer_step_pre_hook(self._pre_step),
                         optimizer.register_optimizer_step_post_hook(self._post_step)]
        self._iter_cls = dataloader._BaseDataLoaderIter
        self._next = self._iter_cls.__next__
        original, recorder_ = self._next, recorder

        def __next__(it):  # noqa: N807 — the wrapped method's own name
            start = now_ns()
            try:
                return original(it)
            finally:
                if active():
                    recorder_.add_hook_span(HOOK_DATALOADER_NEXT, start, now_ns())

        self._iter_cls.__next__ = __next__

    def _pre_step(self, optimizer, args, kwargs) -> None:
        self._opt_start = now_ns()

    def _post_step(self, optimizer, args, kwargs) -> None:
        end = now_ns()
        if not self.active():
            return
        if self._opt_start is not None:
            self.recorder.add_hook_span(HOOK_OPTIMIZER_STEP, self._opt_start, end)
            self._opt_start = None
        self.optimizer_steps += 1
        self.sample_memory(end)

    def sample_memory(self, ts: int) -> None:
        if ts - self._last_sample < SAMPLE_EVERY_NS:
            return
        self._last_sample = ts
        self.recorder.add_sample(SAMPLE_RSS, ts, self._process.memory_info().rss)
        cuda = self.torch.cuda
        if "torch.cuda" in sys.modules and cuda.is_initialized():
            self.recorder.add_sample(SAMPLE_CUDA_ALLOCATED, ts, cuda.memory_allocated())
            self.recorder.add_sample(SAMPLE_CUDA_RESERVED, ts, cuda.memory_reserved())

    def remove(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []
        if self._iter_cls.__next__ is not self._next:
            self._iter_cls.__next__ = self._next
