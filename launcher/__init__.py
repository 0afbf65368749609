"""sagelaunch.launcher: runs a jobspec.TrainingJobSpec, here or on SageMaker. This module is its one face.

Code outside the launcher imports from here only (`from sagelaunch.launcher import submit`), never a submodule
(`tests/foundation/test_architecture.py` checks). Inside, the launcher is cut along one axis:

- `launcher/common/`: what both halves use (the request compilers, the job handle, code files, archives, model
  packaging, predictors, AWS clients and S3, this machine's region and GPUs);
- `launcher/local/`: the local backend (supervisor, registry, container contract, local endpoints and transform);
- `launcher/sagemaker/`: the SageMaker backend (CreateTrainingJob and its waits, endpoints, transform, the role);
- `launcher/backends.py`: the choice between the two.

Each name below is loaded on first use, from the module that defines it, so `import sagelaunch.launcher` loads
nothing else and a name from the SageMaker half brings boto3 only when it is asked for. A name is looked up again
on every `from sagelaunch.launcher import …` (nothing is cached here), so the defining module stays the one place
its value lives.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_COMMON = "sagelaunch.launcher.common"
_LOCAL = "sagelaunch.launcher.local"
_SAGEMAKER = "sagelaunch.launcher.sagemaker"

# public name → (defining module, its attribute there; None: the module itself)
_EXPORTS: dict[str, tuple[str, str | None]] = {
    # choosing a backend; the job handle
    "submit": ("sagelaunch.launcher.backends", "submit"),
    "attach": ("sagelaunch.launcher.backends", "attach"),
    "list_jobs": ("sagelaunch.launcher.backends", "list_jobs"),
    "TrainingJob": (f"{_COMMON}.jobs", "TrainingJob"),
    "print_logs": (f"{_COMMON}.jobs", "print_logs"),
    "wants_logs": (f"{_COMMON}.jobs", "wants_logs"),
    # the request compilers
    "compile_create_training_job_request": (f"{_COMMON}.request", "compile_create_training_job_request"),
    "channel_request": (f"{_COMMON}.request", "channel_request"),
    "rule_configuration": (f"{_COMMON}.request", "rule_configuration"),
    "TransformSettings": (f"{_COMMON}.transform_request", "TransformSettings"),
    "create_transform_job_request": (f"{_COMMON}.transform_request", "create_transform_job_request"),
    "TuningSettings": (f"{_COMMON}.tuning_request", "TuningSettings"),
    "create_tuning_job_request": (f"{_COMMON}.tuning_request", "create_tuning_job_request"),
    "EARLY_STOPPING_TYPES": (f"{_COMMON}.tuning_request", "EARLY_STOPPING_TYPES"),
    "OBJECTIVE_TYPES": (f"{_COMMON}.tuning_request", "OBJECTIVE_TYPES"),
    "STRATEGIES": (f"{_COMMON}.tuning_request", "STRATEGIES"),
    # tuning jobs (both backends' results)
    "start_tuning_job": (f"{_COMMON}.tuning_jobs", "start_tuning_job"),
    "find_tuning_job": (f"{_COMMON}.tuning_jobs", "find_tuning_job"),
    "local_tuning_job": (f"{_COMMON}.tuning_jobs", "local_tuning_job"),
    "register_local_tuning_job": (f"{_COMMON}.tuning_jobs", "register_local"),
    "analytics_rows": (f"{_COMMON}.tuning_jobs", "analytics_rows"),
    # code, archives, models
    "check_git_config": (f"{_COMMON}.gitclone", "check_git_config"),
    "clone_git_code": (f"{_COMMON}.gitclone", "clone"),
    "loop_error": (f"{_COMMON}.sourcedir", "loop_error"),
    "symlink_loop": (f"{_COMMON}.sourcedir", "symlink_loop"),
    "unpack_archive": (f"{_COMMON}.archive", "unpack"),
    "package_model": (f"{_COMMON}.package", "package_model"),
    "repack_model": (f"{_COMMON}.package", "repack_model"),
    "archive_members": (f"{_COMMON}.package", "archive_members"),
    "Predictor": (f"{_COMMON}.predictors", "Predictor"),
    "PredictionError": (f"{_COMMON}.predictors", "PredictionError"),
    "LocalPredictor": (f"{_COMMON}.predictors", "LocalPredictor"),
    "SageMakerPredictor": (f"{_COMMON}.predictors", "SageMakerPredictor"),
    # this machine, AWS access
    "NO_REGION": (f"{_COMMON}.environment", "NO_REGION"),
    "configured_region": (f"{_COMMON}.environment", "configured_region"),
    "default_region": (f"{_COMMON}.environment", "default_region"),
    "no_region_error": (f"{_COMMON}.environment", "no_region_error"),
    "local_gpu_count": (f"{_COMMON}.environment", "local_gpu_count"),
    "client": (f"{_COMMON}.aws.clients", "client"),
    "using_session": (f"{_COMMON}.aws.clients", "using_session"),
    "resolve_region": (f"{_COMMON}.aws.clients", "resolve_region"),
    "account_id": (f"{_COMMON}.aws.clients", "account_id"),
    "AWSError": (f"{_COMMON}.aws.errors", "AWSError"),
    "make_console": (f"{_COMMON}.aws.console", "make_console"),
    "s3": (f"{_COMMON}.aws.s3", None),
    # the local half
    "local_registry": (f"{_LOCAL}.registry", None),
    "repair_registry": (f"{_LOCAL}.registry_doctor", "repair"),
    "resolve_local_channels": (f"{_LOCAL}.channels", "resolve_local"),
    "SAGEMAKER_PREFIX": (f"{_LOCAL}.contract", "SAGEMAKER_PREFIX"),
    "decode_hyperparameters": (f"{_LOCAL}.contract", "decode_hyperparameters"),
    "prepare_script_run": (f"{_LOCAL}.script_run", "prepare"),
    "LocalEndpoint": (f"{_LOCAL}.serving.endpoint", "LocalEndpoint"),
    "running_endpoint": (f"{_LOCAL}.serving.endpoint", "running_endpoint"),
    "endpoint_registry": (f"{_LOCAL}.serving.endpoint_registry", None),
    "check_local_settings": (f"{_LOCAL}.transform", "check_local_settings"),
    "run_local_transform": (f"{_LOCAL}.transform", "run_local_transform"),
    "find_transform_job": (f"{_LOCAL}.transform", "find_transform_job"),
    # the SageMaker half
    "prepared_request": (f"{_SAGEMAKER}.backend", "prepared_request"),
    "SageMakerTrainingJob": (f"{_SAGEMAKER}.backend", "SageMakerTrainingJob"),
    "profiler_output_uri": (f"{_SAGEMAKER}.backend", "profiler_output_uri"),
    "role_arn": (f"{_SAGEMAKER}.training", "role_arn"),
    "expand_role": (f"{_SAGEMAKER}.training", "expand_role"),
    "caller_arn": (f"{_SAGEMAKER}.identity", "caller_arn"),
    "execution_role": (f"{_SAGEMAKER}.identity", "execution_role"),
    "sagemaker_endpoint": (f"{_SAGEMAKER}.endpoint", None),
    "create_model": (f"{_SAGEMAKER}.transform", "create_model"),
    "start_transform_job": (f"{_SAGEMAKER}.transform", "start_transform_job"),
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # the same names for type checkers, which do not run __getattr__
    from sagelaunch.launcher.backends import attach, list_jobs, submit
    from sagelaunch.launcher.common.archive import unpack as unpack_archive
    from sagelaunch.launcher.common.aws import s3
    from sagelaunch.launcher.common.aws.clients import account_id, client, resolve_region, using_session
    from sagelaunch.launcher.common.aws.console import make_console
    from sagelaunch.launcher.common.aws.errors import AWSError
    from sagelaunch.launcher.common.environment import (
        NO_REGION,
        configured_region,
        default_region,
        local_gpu_count,
        no_region_error,
    )
    from sagelaunch.launcher.common.gitclone import check_git_config
    from sagelaunch.launcher.common.gitclone import clone as clone_git_code
    from sagelaunch.launcher.common.jobs import TrainingJob, print_logs, wants_logs
    from sagelaunch.launcher.common.package import archive_members, package_model, repack_model
    from sagelaunch.launcher.common.predictors import LocalPredictor, PredictionError, Predictor, SageMakerPredictor
    from sagelaunch.launcher.common.request import (
        channel_request,
        compile_create_training_job_request,
        rule_configuration,
    )
    from sagelaunch.launcher.common.sourcedir import loop_error, symlink_loop
    from sagelaunch.launcher.common.transform_request import TransformSettings, create_transform_job_request
    from sagelaunch.launcher.common.tuning_jobs import (
        analytics_rows,
        find_tuning_job,
        local_tuning_job,
        start_tuning_job,
    )
    from sagelaunch.launcher.common.tuning_jobs import register_local as register_local_tuning_job
    from sagelaunch.launcher.common.tuning_request import (
        EARLY_STOPPING_TYPES,
        OBJECTIVE_TYPES,
        STRATEGIES,
        TuningSettings,
        create_tuning_job_request,
    )
    from sagelaunch.launcher.local import registry as local_registry
    from sagelaunch.launcher.local.channels import resolve_local as resolve_local_channels
    from sagelaunch.launcher.local.contract import SAGEMAKER_PREFIX, decode_hyperparameters
    from sagelaunch.launcher.local.registry_doctor import repair as repair_registry
    from sagelaunch.launcher.local.script_run import prepare as prepare_script_run
    from sagelaunch.launcher.local.serving import endpoint_registry
    from sagelaunch.launcher.local.serving.endpoint import LocalEndpoint, running_endpoint
    from sagelaunch.launcher.local.transform import check_local_settings, find_transform_job, run_local_transform
    from sagelaunch.launcher.sagemaker import endpoint as sagemaker_endpoint
    from sagelaunch.launcher.sagemaker.backend import SageMakerTrainingJob, prepared_request, profiler_output_uri
    from sagelaunch.launcher.sagemaker.identity import caller_arn, execution_role
    from sagelaunch.launcher.sagemaker.training import expand_role, role_arn
    from sagelaunch.launcher.sagemaker.transform import create_model, start_transform_job


def __getattr__(name: str) -> Any:
    """A public name, from the module that defines it (imported now if it was not yet)."""
    try:
        module_name, attribute = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'sagelaunch.launcher' has no attribute {name!r}") from None
    module = importlib.import_module(module_name)
    return module if attribute is None else getattr(module, attribute)


def __dir__() -> list[str]:
    return [*globals(), *__all__]
