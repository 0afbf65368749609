"""What sagelaunch's own in-job libraries tell the profiler, without importing it: spans and job settings.

modelparallel and profiler may import jobspec only (docs/architecture.md). So the profiler, once the script imports
it, registers its annotation functions here (profiler/api.py), and modelparallel marks its pipeline's blocking
receives with ``span(PIPELINE_WAIT)``; with no profiler registered a span costs a global lookup. Settings the trace
cannot tell and the job's parameters do not say (how many pipeline stages each rank runs, which sagelaunch's SMP
decides from the model; the Hugging Face Trainer's gradient_accumulation_steps) are noted with ``note_setting`` and
recorded in the profile beside SM_HP_MP_PARAMETERS' (profiler/job_settings.py). The names are the contract between
the two sides: the profiler's analysis reads them back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

# a pipeline stage blocked in a receive from its peer stage (activations forward, gradients backward): the bubble
PIPELINE_WAIT = "pipeline_wait"
# settings: pipeline stages each rank runs (interleaved: more than one); microbatches between a fill and a drain of
# the pipeline (sagelaunch's SMP runs active_microbatches' waves, each filling and draining); optimizer steps'
# micro-batches
VIRTUAL_STAGES = "virtual_stages"
MICROBATCHES_PER_FILL = "microbatches_per_fill"
GRADIENT_ACCUMULATION_STEPS = "gradient_accumulation_steps"

Begin = Callable[[str], object]
End = Callable[[object], None]

_annotator: tuple[Begin, End] | None = None
_settings: dict[str, int] = {}


def register(begin: Begin, end: End) -> None:
    """The profiler's way in: ``begin(name)`` opens a span (never a step) and returns what ``end`` closes."""
    global _annotator
    _annotator = (begin, end)


def unregister() -> None:
    global _annotator
    _annotator = None


@contextmanager
def span(name: str) -> Iterator[None]:
    """Mark the block as ``name`` for the profiler when one is registered (it records only while profiling)."""
    annotator = _annotator
    if annotator is None:
        yield
        return
    handle = annotator[0](name)
    try:
        yield
    finally:
        annotator[1](handle)


def note_setting(key: str, value: int) -> None:
    """A job setting this process runs with (a whole number ≥ 1), for the profile's metadata."""
    _settings[key] = value


def settings() -> dict[str, int]:
    return dict(_settings)
