"""How @smp.step learns a pipelined model's inputs: the model's forward raises _ModelCallCaptured with the arguments
it was called with (step_runner.py runs the step function up to that call), instead of running the stages."""

from __future__ import annotations

from typing import Any


class _ModelCallCaptured(Exception):
    """Raised by model(...) while smp.step records a pipeline's model inputs."""

    def __init__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        super().__init__("model call captured")
        self.args, self.kwargs = args, kwargs
