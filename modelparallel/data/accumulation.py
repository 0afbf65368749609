"""SMP v1's backward_passes_per_step=N: data-parallel gradients are all-reduced on every N-th backward pass (an
@smp.step call run with gradients enabled, or that called model.backward; not one under torch.no_grad); the passes
in between accumulate them locally (DDP's no_sync, FSDP's requires_gradient_sync(False), or no average after the
step), as SMP's DDP does for gradient accumulation.

The count restarts at optimizer.zero_grad() (an accumulation window starts there), and optimizer.step() after
passes that were not all-reduced is refused: the replicas would step with different gradients and drift apart.
"""

from __future__ import annotations

from sagelaunch.modelparallel.errors import SMPValidationError


class GradientAccumulation:
    """How many backward passes ran since the gradients were last all-reduced, and whether this step reduces."""

    def __init__(self, passes_per_step: int) -> None:
        self.passes_per_step = passes_per_step
        self.unreduced = 0  # backward passes whose gradients are not all-reduced yet
        self.reduce_now = True  # this step's backward all-reduces (decided when the step starts)

    def begin_step(self) -> None:
        self.reduce_now = self.unreduced + 1 >= self.passes_per_step

    def end_step(self, backward_ran: bool) -> None:
        if backward_ran:
            self.unreduced = 0 if self.reduce_now else self.unreduced + 1

    def restart(self) -> None:
        """optimizer.zero_grad(): the gradients accumulated so far are gone."""
        self.unreduced = 0

    def check_reduced(self) -> None:
        """Before optimizer.step(): refuse gradients that some backward passes left unreduced."""
        if self.unreduced:
            n = self.passes_per_step
            fix = (f"call optimizer.step() after every {n}th @smp.step call (optimizer.zero_grad() at the start of "
                   "each accumulation), or set backward_passes_per_step to the number of @smp.step calls per "
                   "optimizer.step()")
            raise SMPValidationError(
                f"smp.DistributedModel(backward_passes_per_step={n}): optimizer.step() after {self.unreduced} "
                f"backward pass(es) whose gradients are not all-reduced yet (they are on every {n}th); {fix}",
                field="backward_passes_per_step", value=n, allowed=f"optimizer.step() after a multiple of {n} passes",
                fix=fix)
