"""Running one smp.step through torch.distributed.pipelining.

"simple" → ScheduleGPipe (one stage per rank); "interleaved" → ScheduleInterleaved1F1B (looped stages per rank).
The user's step function is the schedule's loss function on the last stage: it runs once per microbatch with
`model(...)` returning that microbatch's pipeline output, and `model.backward(loss)` handing the loss to the
schedule, which runs the backward through all stages.

SMP's active_microbatches (at most that many microbatches in process at once) is honoured by running the
microbatches in consecutive waves of at most that many, each a whole schedule run; gradients accumulate over the
waves and are divided by the step's microbatch count once, at the end, as one run would.
"""

from __future__ import annotations

from typing import Any, Callable

from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.pipeline_waits import note_schedule, receives_marked


class PipelineRunner:
    def __init__(self, stage_modules: list, stage_indices: list[int], num_stages: int, pp_group, device,
                 schedule: str, scale_grads: bool, active_microbatches: int | None = None):
        self.stage_modules = stage_modules
        self.stage_indices = stage_indices
        self.num_stages = num_stages
        self.group = pp_group
        self.device = device
        self.schedule_name = schedule
        self.scale_grads = scale_grads
        self.active_microbatches = active_microbatches
        self._cache: dict[Any, Any] = {}
        self._loss_fn: Callable | None = None
        self._targets: list = []
        self._indices: list[int] = []  # the step's microbatch index of each target of the running wave

    @property
    def is_first(self) -> bool:
        return 0 in self.stage_indices

    @property
    def is_last(self) -> bool:
        return self.num_stages - 1 in self.stage_indices

    def _trampoline(self, output, target):
        for i, t in enumerate(self._targets):
            if target is t:
                assert self._loss_fn is not None, "a target is set only while run() holds the step's loss function"
                return self._loss_fn(output, self._indices[i])
        # stage set-up runs the loss once on a detached copy of the target to infer gradient shapes:
        # answer with a zero loss instead of running the user's step function an extra time
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        return sum(o.float().sum() for o in outputs) * 0.0

    def _schedule(self, n_microbatches: int, key: Any, scale_grads: bool):
        from torch.distributed.pipelining import ScheduleGPipe, ScheduleInterleaved1F1B

        cache_key = (n_microbatches, key, scale_grads)
        if cache_key not in self._cache:
            stages = [_stage_class()(m, i, self.num_stages, self.device, group=self.group)
                      for m, i in zip(self.stage_modules, self.stage_indices)]
            if self.schedule_name == "simple":
                if len(stages) != 1:
                    raise SMPValidationError("the simple (GPipe) schedule runs one stage per rank")
                sched = ScheduleGPipe(stages[0], n_microbatches, loss_fn=self._trampoline, scale_grads=scale_grads)
            else:
                sched = ScheduleInterleaved1F1B(stages, n_microbatches, loss_fn=self._trampoline,
                                                scale_grads=scale_grads)
            self._cache[cache_key] = sched
        return self._cache[cache_key]

    def waves(self, n: int) -> list[range]:
        """The step's microbatches in consecutive waves of at most active_microbatches (one wave without it)."""
        size = min(self.active_microbatches or n, n)
        if self.schedule_name != "simple":  # Interleaved1F1B runs rounds of pp microbatches: a wave of whole rounds
            pp = self.num_stages // len(self.stage_indices)
            while size > 1 and size % max(1, size // pp):
                size -= 1
        return [range(start, min(start + size, n)) for start in range(0, n, size)]

    def run(self, arg_mbs: list[tuple], kwarg_mbs: list[dict], loss_fn: Callable, train: bool) -> None:
        """Run every microbatch; `loss_fn(output, microbatch_index)` is called on the last stage."""
        waves = self.waves(len(kwarg_mbs))
        note_schedule(self.num_stages, len(self.stage_indices), len(kwarg_mbs), max(len(w) for w in waves))
        self._loss_fn = loss_fn
        try:
            for wave in waves:
                self._run_wave(wave, arg_mbs, kwarg_mbs, train, scale_grads=self.scale_grads and len(waves) == 1)
        finally:
            self._loss_fn = None
        if train and self.scale_grads and len(waves) > 1:  # what one run's scale_grads does, once for the step
            for m in self.stage_modules:
                for p in m.parameters():
                    if p.grad is not None:
                        p.grad.div_(len(kwarg_mbs))

    def _run_wave(self, wave: range, arg_mbs, kwarg_mbs, train: bool, scale_grads: bool) -> None:
        import torch

        arg_mbs, kwarg_mbs = [arg_mbs[i] for i in wave] if arg_mbs else arg_mbs, [kwarg_mbs[i] for i in wave]
        n = len(kwarg_mbs)
        shapes = tuple(tuple(t.shape) if isinstance(t, torch.Tensor) else None for t in arg_mbs[0]) \
            if arg_mbs else ()
        kshapes = tuple(sorted((k, tuple(v.shape)) for k, v in kwarg_mbs[0].items() if isinstance(v, torch.Tensor)))
        sched = self._schedule(n, (shapes, kshapes, train), scale_grads)
        self._indices = list(wave)
        self._targets = [torch.tensor(i, device=self.device) for i in wave]  # identity marks microbatch i
        had_backward = sched._has_backward
        sched._has_backward = train  # as schedule.eval() does: forward only when not training
        # what schedule.step() does before _step_microbatches (we pass our own microbatches and targets)
        stages = sched._stages if hasattr(sched, "_stages") else [sched._stage]
        for stage in stages:
            stage.has_backward = train
            stage.clear_runtime_states()
        try:
            with receives_marked():  # the stage's blocking receives: pipeline_wait spans for the profiler
                sched._step_microbatches(arg_mbs if self.is_first else None, kwarg_mbs,
                                         target_mbs=self._targets, losses=None, return_outputs=False)
        finally:
            sched._has_backward = had_backward


def _stage_class():
    """PipelineStage whose shape inference runs the stage on zeros, not on uninitialised memory: a stage's inputs
    include the model's integer tensors (token ids, labels), which must be valid indices (a label read from
    garbage fails cross-entropy's bounds check)."""
    import torch
    from torch.distributed.pipelining import PipelineStage

    class _ZeroFilledStage(PipelineStage):
        def _to_tensor(self, arg):
            out = super()._to_tensor(arg)
            if not isinstance(arg, torch.Tensor) and not hasattr(out, "to_local"):
                with torch.no_grad():
                    out.zero_()
            return out

    return _ZeroFilledStage
