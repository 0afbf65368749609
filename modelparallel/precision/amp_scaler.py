"""SMP v1's loss scalers (smp.DistributedOptimizer's static_loss_scale / dynamic_loss_scale=True), with the
semantics of the Megatron/apex FP16_Optimizer scalers SMP v1 ships: the dynamic scale starts at init_scale
(2**32), is divided by scale_factor on an overflow once `delayed_shift` overflows have been seen (hysteresis),
never below min_scale, and multiplied by scale_factor after scale_window steps without an overflow.
Pure bookkeeping: the overflow decision itself is made by amp_optimizer over every rank's gradients."""

from __future__ import annotations

from typing import Any

from sagelaunch.modelparallel.errors import SMPValidationError

DYNAMIC_DEFAULTS = {"init_scale": 2.0**32, "scale_factor": 2.0, "scale_window": 1000, "min_scale": 1.0,
                    "delayed_shift": 1, "consecutive_hysteresis": False}


class LossScaler:
    """A static loss scale (static_loss_scale=…; 1.0 means no scaling). Overflowing steps are still skipped."""

    dynamic = False

    def __init__(self, scale: float = 1.0) -> None:
        if not scale or scale <= 0:
            raise SMPValidationError(f"smp.DistributedOptimizer(static_loss_scale={scale!r}): a positive number is "
                                     "required, e.g. 128.0; or pass dynamic_loss_scale=True")
        self.cur_scale = float(scale)

    @property
    def loss_scale(self) -> float:
        return self.cur_scale

    def update_scale(self, overflow: bool) -> None:
        pass

    def state_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        vars(self).update(sd)


class DynamicLossScaler(LossScaler):
    dynamic = True

    def __init__(self, **dynamic_loss_args: Any) -> None:
        unknown = sorted(set(dynamic_loss_args) - set(DYNAMIC_DEFAULTS))
        if unknown:
            raise SMPValidationError(
                f"smp.DistributedOptimizer(dynamic_loss_args=...): unknown key(s) {', '.join(unknown)}; "
                f"allowed: {', '.join(DYNAMIC_DEFAULTS)}")
        args = {**DYNAMIC_DEFAULTS, **dynamic_loss_args}
        super().__init__(args["init_scale"])
        self.scale_factor = float(args["scale_factor"])
        self.scale_window = int(args["scale_window"])
        self.min_scale = float(args["min_scale"])
        self.delayed_shift = int(args["delayed_shift"])
        self.consecutive_hysteresis = bool(args["consecutive_hysteresis"])
        self.cur_hysteresis = self.delayed_shift
        self.cur_iter = 0
        self.last_overflow_iter = -1

    def update_scale(self, overflow: bool) -> None:
        if overflow:
            if self.delayed_shift == 1 or self.cur_hysteresis == 1:
                self.cur_scale = max(self.cur_scale / self.scale_factor, self.min_scale)
            else:
                self.cur_hysteresis -= 1
            self.last_overflow_iter = self.cur_iter
        else:
            if self.consecutive_hysteresis:
                self.cur_hysteresis = self.delayed_shift
            if (self.cur_iter - self.last_overflow_iter) % self.scale_window == 0:
                if not self.consecutive_hysteresis:
                    self.cur_hysteresis = self.delayed_shift
                self.cur_scale *= self.scale_factor
        self.cur_iter += 1
