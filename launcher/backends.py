"""The backend interface, in one place: where a spec runs and where a job is found again.

Each backend module (`sagelaunch.launcher.local.backend`, `sagelaunch.launcher.sagemaker.backend`) provides the same three functions:

- `submit(spec, *, wait, logs, **options) -> TrainingJob`: run a spec;
- `attach(name, **options) -> TrainingJob | None`: a handle on an existing job (None: not this backend's);
- `list_jobs(status=None, **options) -> list[dict]`: DescribeTrainingJob-shaped summaries, newest first.

This module chooses between them: `local`/`local_gpu` instance types run here, anything else on SageMaker;
a name is looked up in the local registry first, then on SageMaker. A backend module is imported only
when it is chosen (the SageMaker one brings boto3).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.instance_types import backend_of
from sagelaunch.jobspec.suggest import did_you_mean, fix_from_hint
from sagelaunch.launcher.common.aws.errors import AWSError
from sagelaunch.launcher.common.jobs import JobNotFoundError

if TYPE_CHECKING:
    from sagelaunch.jobspec.spec import TrainingJobSpec
    from sagelaunch.launcher.common.jobs import TrainingJob

BACKENDS = ("local", "sagemaker")


class Backend(Protocol):
    """What each backend module provides (tests/foundation/test_architecture.py checks both)."""

    def submit(self, spec: "TrainingJobSpec", *, wait: bool = True, logs: bool = True,
               **options: Any) -> "TrainingJob": ...

    def attach(self, name: str, **options: Any) -> "TrainingJob | None": ...

    def list_jobs(self, status: str | None = None, **options: Any) -> list[dict[str, Any]]: ...


def backend(name: str) -> Backend | ModuleType:
    """The backend module called `name` ("local" or "sagemaker")."""
    if name not in BACKENDS:
        raise SagelaunchError(f"backend={name!r} is not a backend; allowed: {', '.join(BACKENDS)}", field="backend",
                              value=name, allowed=", ".join(BACKENDS),
                              fix=fix_from_hint(did_you_mean(name, BACKENDS), f"use one of {', '.join(BACKENDS)}"))
    return importlib.import_module(f"sagelaunch.launcher.{name}.backend")


def submit(spec: "TrainingJobSpec", *, wait: bool = True, logs: bool = True, **options: Any) -> "TrainingJob":
    """Run `spec` on the backend its instance type selects; imports that backend only."""
    return backend(backend_of(spec.compute.instance_type)).submit(spec, wait=wait, logs=logs, **options)


def attach(name: str, **options: Any) -> "TrainingJob":
    """The job called `name`: a local one first, else SageMaker's (options: region=, poll intervals).

    A name neither knows (or that SageMaker could not be asked about) raises JobNotFoundError suggesting
    close local names and how to reach SageMaker.
    """
    local = backend("local").attach(name, **options)
    if local is not None:
        return local

    try:
        found = backend("sagemaker").attach(name, **options)
    except (AWSError, ValueError) as exc:
        raise JobNotFoundError.for_name(name, exc) from None
    if found is None:  # SageMaker's attach raises rather than answer None; the backend interface allows None
        raise JobNotFoundError.for_name(name, LookupError(f"SageMaker has no training job named {name!r}"))
    return found


def list_jobs(name: str, status: str | None = None, **options: Any) -> list[dict[str, Any]]:
    """Job summaries of backend `name` (TrainingJobName, TrainingJobStatus, CreationTime…), newest first."""
    return backend(name).list_jobs(status=status, **options)
