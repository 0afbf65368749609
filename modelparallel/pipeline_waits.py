"""The pipeline's blocking receives marked ``pipeline_wait`` for the profiler: where a stage waits for its peer stage.

torch.distributed.pipelining posts a stage's receives (activations forward, gradients backward) with its module's
``_batch_p2p`` and blocks on them with ``_wait_batch_p2p``, in every schedule (GPipe's and the runtime's that runs
Interleaved1F1B). While a step runs, ``receives_marked()`` swaps those two for versions that tag a batch holding a
receive and wrap the wait on it in ``jobspec.library_marks.span(PIPELINE_WAIT)``; waits on sends alone are not marked.
The profiler's pipeline_bubble finding reads these spans (the bubble, measured) against the schedule's expected
bubble, from the degree, microbatches and stages per rank the pipeline ran with (``note_schedule``: what ran, also
when smp.init(config=...) set them in the script). On a torch without those two functions nothing is swapped and
the bubble goes unmeasured.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from sagelaunch.jobspec.library_marks import MICROBATCHES_PER_FILL, PIPELINE_WAIT, VIRTUAL_STAGES, note_setting, span


def note_schedule(num_stages: int, stages_here: int, microbatches: int, per_wave: int) -> None:
    """The pipeline's shape for the profile's metadata: degree, microbatches per step (and per wave, where
    active_microbatches splits the step into waves that each fill and drain), stages per rank."""
    note_setting("pipeline_parallel_degree", num_stages // max(1, stages_here))
    note_setting("microbatches", microbatches)
    note_setting(MICROBATCHES_PER_FILL, per_wave)
    note_setting(VIRTUAL_STAGES, stages_here)


class _Receives(list):
    """The works of a batch of point-to-point operations holding at least one receive."""


def _marking(batch_p2p: Callable[..., Any], irecv: Any) -> Callable[..., Any]:
    def batch(p2p_ops: list, *args: Any, **kwargs: Any) -> Any:
        works = batch_p2p(p2p_ops, *args, **kwargs)
        return _Receives(works) if any(op.op is irecv for op in p2p_ops) else works
    return batch


def _waiting(wait_batch_p2p: Callable[[list], None]) -> Callable[[list], None]:
    def wait(work: list) -> None:
        if isinstance(work, _Receives):
            with span(PIPELINE_WAIT):
                wait_batch_p2p(work)
        else:
            wait_batch_p2p(work)
    return wait


@contextmanager
def receives_marked() -> Iterator[None]:
    """Inside the block, the pipeline schedules' receive waits are ``pipeline_wait`` spans."""
    import torch.distributed as dist
    from torch.distributed.pipelining import schedules

    batch_p2p, wait_batch_p2p = getattr(schedules, "_batch_p2p", None), getattr(schedules, "_wait_batch_p2p", None)
    if batch_p2p is None or wait_batch_p2p is None:
        yield
        return
    schedules._batch_p2p = _marking(batch_p2p, dist.irecv)
    schedules._wait_batch_p2p = _waiting(wait_batch_p2p)
    try:
        yield
    finally:
        schedules._batch_p2p = batch_p2p
        schedules._wait_batch_p2p = wait_batch_p2p
