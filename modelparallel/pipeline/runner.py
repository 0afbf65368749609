"""Running one smp.step through torch.distributed.pipelining.

"simple" → ScheduleGPipe (one stage per rank); "interleaved" → ScheduleInterleaved1F1B (looped stages per rank).
The user's step function is the schedule's loss function on the last stage: it runs once per microbatch with
`model(...)` returning that microbatch's pipeline output, and `model.backward(loss)` handing the loss to the
schedule, which runs the backward through all stages.

Averaging over microbatches (smp.DistributedModel's average_grads_across_microbatches, `scale_grads` here) divides
each microbatch's loss by the step's microbatch count before its backward, as one process's batch-mean loss weighs
each row. SMP v1 sums the microbatches' gradients and divides the sum at the step's end instead
(smdistributed/modelparallel/torch/allreduce/scaler.py and ddp.py, GradReducer._synchronize_internal): the same
average in exact arithmetic (bit for bit when the count is a power of two), but in fp16 each microbatch's gradients
of its own mean loss are n times one process's and their sum overflows at loss scales one process keeps (the GPT-2
2022 example at pp=2: inf at 2**17, where one process's largest gradient is 32256).

SMP's active_microbatches (at most that many microbatches in process at once) is honoured by running the
microbatches in consecutive waves of at most that many, each a whole schedule run; gradients accumulate over the
waves.
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
        self._loss_weight = 1.0  # what each microbatch's loss is multiplied by before its backward

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
                loss = self._loss_fn(output, self._indices[i])
                return loss * self._loss_weight if self._loss_weight != 1.0 else loss
        # stage set-up runs the loss once on a detached copy of the target to infer gradient shapes:
        # answer with a zero loss instead of running the user's step function an extra time
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        return sum(o.float().sum() for o in outputs) * 0.0

    def _schedule(self, n_microbatches: int, key: Any):
        """The schedule for a wave; it never scales gradients itself (the losses are weighted: see the module)."""
        from torch.distributed.pipelining import ScheduleGPipe, ScheduleInterleaved1F1B

        cache_key = (n_microbatches, key)
        if cache_key not in self._cache:
            stages = [_stage_class()(m, i, self.num_stages, self.device, group=self.group)
                      for m, i in zip(self.stage_modules, self.stage_indices)]
            if self.schedule_name == "simple":
                if len(stages) != 1:
                    raise SMPValidationError("the simple (GPipe) schedule runs one stage per rank")
                sched = ScheduleGPipe(stages[0], n_microbatches, loss_fn=self._trampoline, scale_grads=False)
            else:
                sched = ScheduleInterleaved1F1B(stages, n_microbatches, loss_fn=self._trampoline, scale_grads=False)
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
        self._loss_weight = 1.0 / len(kwarg_mbs) if self.scale_grads else 1.0
        try:
            for wave in waves:
                self._run_wave(wave, arg_mbs, kwarg_mbs, train)
        finally:
            self._loss_fn = None

    def _run_wave(self, wave: range, arg_mbs, kwarg_mbs, train: bool) -> None:
        import torch

        arg_mbs, kwarg_mbs = [arg_mbs[i] for i in wave] if arg_mbs else arg_mbs, [kwarg_mbs[i] for i in wave]
        n = len(kwarg_mbs)
        shapes = tuple(tuple(t.shape) if isinstance(t, torch.Tensor) else None for t in arg_mbs[0]) \
            if arg_mbs else ()
        kshapes = tuple(sorted((k, tuple(v.shape)) for k, v in kwarg_mbs[0].items() if isinstance(v, torch.Tensor)))
        sched = self._schedule(n, (shapes, kshapes, train))
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
