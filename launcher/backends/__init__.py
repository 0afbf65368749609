"""Where a spec runs: `local`/`local_gpu` here, anything else on SageMaker."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from launcher.jobs import TrainingJob
    from launcher.spec import TrainingJobSpec


def submit(spec: "TrainingJobSpec", *, wait: bool = True, logs: bool = True, **options: Any) -> "TrainingJob":
    """Run `spec` on the backend its instance type selects; imports that backend only."""
    if spec.is_local:
        from launcher.backends import local as backend
    else:
        from launcher.backends import sagemaker as backend
    return backend.submit(spec, wait=wait, logs=logs, **options)
