"""What every technique builds on: smp.init and the rank/group API (runtime), the validated parameters (config),
the rank layout (layout), object communication (comm). `state` is SMP's one run-time state."""

from sagelaunch.modelparallel.core.state import _require_init, state  # noqa: F401  (what the techniques import)
