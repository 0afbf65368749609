"""Hugging Face TrainerCallback: step_N, Forward, Backward and Optimizer annotations without script changes.

    trainer = Trainer(..., callbacks=[ProfilerCallback()])

Forward is timed by hooks on the model (pre-hook → hook), Backward runs from the end of Forward to
on_pre_optimizer_step (or the next Forward under gradient accumulation), Optimizer from on_pre_optimizer_step to
on_optimizer_step. The callback starts the profiler at train begin (unless the script already did) and stops it
at train end.
"""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback

from sagelaunch.jobspec import library_marks
from sagelaunch.profiler.api import SMProfiler, _Handle
from sagelaunch.profiler.settings import profiler_configured


class ProfilerCallback(TrainerCallback):
    def __init__(self, profiler: SMProfiler | None = None) -> None:
        self.prof = profiler or SMProfiler.instance()
        self._started_here = False
        self._step: _Handle | None = None
        self._phase: tuple[str, _Handle | None] | None = None  # (name, handle)
        self._hooks: list[Any] = []  # torch's RemovableHandle

    def _end_phase(self) -> None:
        if self._phase is not None:
            self.prof.annotation_end(self._phase[1])
            self._phase = None

    def _begin_phase(self, name: str) -> None:
        self._end_phase()
        self._phase = (name, self.prof.annotation_begin(name))

    # model hooks ---------------------------------------------------------------------------------
    def _pre_forward(self, module, args):
        if module.training and self._step is not None:
            self._begin_phase("Forward")

    def _post_forward(self, module, args, output):
        if module.training and self._phase is not None and self._phase[0] == "Forward":
            self._begin_phase("Backward")

    # trainer events ------------------------------------------------------------------------------
    def on_train_begin(self, args, state, control, model=None, **kwargs):
        # each step_N spans this many micro-batches: the profile records it (the annotations cannot tell)
        library_marks.note_setting(library_marks.GRADIENT_ACCUMULATION_STEPS, int(args.gradient_accumulation_steps))
        if not self.prof.active:
            self.prof.start_profiling()
            self._started_here = self.prof.active
        if model is not None and not self._hooks:
            self._hooks = [model.register_forward_pre_hook(self._pre_forward),
                           model.register_forward_hook(self._post_forward)]

    def on_step_begin(self, args, state, control, **kwargs):
        self._end_phase()
        if self._step is not None:
            self.prof.annotation_end(self._step)
        self._step = self.prof.annotation_begin(f"step_{state.global_step + 1}")

    def on_pre_optimizer_step(self, args, state, control, **kwargs):
        self._begin_phase("Optimizer")

    def on_optimizer_step(self, args, state, control, **kwargs):
        self._end_phase()

    def on_step_end(self, args, state, control, **kwargs):
        self._end_phase()
        if self._step is not None:
            self.prof.annotation_end(self._step)
            self._step = None

    def on_train_end(self, args, state, control, **kwargs):
        self.on_step_end(args, state, control)
        for h in self._hooks:
            h.remove()
        self._hooks = []
        if self._started_here:
            self.prof.stop_profiling()
            self._started_here = False


def callbacks_if_configured() -> list:
    """[ProfilerCallback()] when the job has an enabled profiler configuration, else []:
    ``Trainer(..., callbacks=callbacks_if_configured())``."""
    return [ProfilerCallback()] if profiler_configured() else []
