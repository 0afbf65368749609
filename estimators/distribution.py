"""`distribution=` as the SageMaker SDK takes it, parsed into what a job needs.

Shapes (the SDK's): {"smdistributed": {"modelparallel": {"enabled": True, "parameters": {...}}},
"mpi": {"enabled": True, "processes_per_host": 8, "custom_mpi_options": "..."}},
{"smdistributed": {"dataparallel": {"enabled": True}}}, {"torch_distributed": {"enabled": True}},
{"pytorchddp": {"enabled": True}}, and for TensorFlow {"parameter_server": ...},
{"multi_worker_mirrored_strategy": ...}. The output is processes per host plus the
hyperparameters the SDK would send (mp_parameters, sagemaker_mpi_enabled, …).
Facts (which instance types and versions support what) come from the support catalog, the SMP v1
parameter model and its rules from `jobspec.smp`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from jobspec.contract import is_local_instance_type
from jobspec.errors import shown, validation_error_text
from jobspec.smp import SMPParameters, check_local_support, check_world

__all__ = ["DistributionPlan", "parse_distribution"]


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class EnabledOptions(_Options):
    enabled: bool = False


class MPIOptions(_Options):
    enabled: bool = False
    processes_per_host: int | None = Field(None, ge=1, le=64)
    custom_mpi_options: str = ""


class ModelParallelOptions(_Options):
    enabled: bool = False
    parameters: dict[str, Any] = Field(default_factory=dict)


class DataParallelOptions(_Options):
    enabled: bool = False
    custom_mpi_options: str = ""


class SMDistributedOptions(_Options):
    modelparallel: ModelParallelOptions | None = None
    dataparallel: DataParallelOptions | None = None


class DistributionOptions(_Options):
    smdistributed: SMDistributedOptions | None = None
    mpi: MPIOptions | None = None
    torch_distributed: EnabledOptions | None = None
    pytorchddp: EnabledOptions | None = None
    parameter_server: EnabledOptions | None = None
    multi_worker_mirrored_strategy: EnabledOptions | None = None


Strategy = Literal[
    "none", "modelparallel", "dataparallel", "torch_distributed", "pytorchddp", "mpi",
    "parameter_server", "multi_worker_mirrored_strategy",
]


@dataclass(frozen=True)
class DistributionPlan:
    strategy: Strategy
    processes_per_host: int
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    mp_parameters: dict[str, Any] | None = None  # the user's parameters dict, as given
    smp: SMPParameters | None = None


MP_FIELD = "distribution.smdistributed.modelparallel.parameters"


@contextmanager
def _naming(field: str) -> Iterator[None]:
    """jobspec.smp's rules speak of mp_parameters (smp.init shares them); an estimator's error names its field."""
    try:
        yield
    except ValueError as err:
        raise ValueError(f"{field}: {err}") from None


def _enabled(opt: BaseModel | None) -> bool:
    return bool(opt is not None and getattr(opt, "enabled", False))


def _check_pytorchddp(framework_version: str, instance_type: str) -> None:
    """SDK v2 2.257 rewrites pytorchddp into smdistributed dataparallel: its hardware rules apply, said so."""
    from jobspec import catalog as support

    support.check_distribution_support("pytorchddp", "pytorch", framework_version, instance_type)
    try:
        support.check_distribution_support("dataparallel", "pytorch", framework_version, instance_type)
    except ValueError as err:
        raise ValueError(
            f"distribution.pytorchddp: SageMaker SDK v2 runs pytorchddp as SageMaker's data-parallel library "
            f"(smdistributed dataparallel), so its limits apply — {err}; for plain PyTorch DDP on any GPU instance "
            "use {'torch_distributed': {'enabled': True}}"
        ) from None


def parse_distribution(
    distribution: dict[str, Any] | None,
    *,
    framework: str,
    framework_version: str,
    instance_type: str,
    instance_count: int,
    gpus_per_host: int,
) -> DistributionPlan:
    """Validate the dict against shapes, rules and the support matrix; raise ValueError naming the key."""
    from jobspec import catalog as support  # lazy: the matrix loads on first use

    if not distribution:
        return DistributionPlan("none", 1)
    if not isinstance(distribution, dict):
        raise ValueError(f"distribution={shown(distribution)} must be a dict such as {{'torch_distributed': {{'enabled': True}}}}")
    try:
        opts = DistributionOptions.model_validate(distribution)
    except ValidationError as err:
        raise ValueError(validation_error_text("distribution", err)) from None

    local = is_local_instance_type(instance_type)
    smd = opts.smdistributed or SMDistributedOptions()
    mp_on, dp_on = _enabled(smd.modelparallel), _enabled(smd.dataparallel)
    mpi_on = _enabled(opts.mpi)
    enabled = [name for name, on in (
        ("smdistributed.modelparallel", mp_on), ("smdistributed.dataparallel", dp_on),
        ("torch_distributed", _enabled(opts.torch_distributed)), ("pytorchddp", _enabled(opts.pytorchddp)),
        ("parameter_server", _enabled(opts.parameter_server)),
        ("multi_worker_mirrored_strategy", _enabled(opts.multi_worker_mirrored_strategy)),
    ) if on]
    if len(enabled) > 1:
        raise ValueError(f"distribution enables {' and '.join(enabled)}; allowed: one strategy per job — keep one")
    strategy: Strategy = enabled[0].split(".")[-1] if enabled else ("mpi" if mpi_on else "none")  # type: ignore[assignment]
    if strategy == "none":
        return DistributionPlan("none", 1)
    if strategy == "modelparallel" and not mpi_on:
        raise ValueError(
            "distribution.smdistributed.modelparallel needs MPI: add \"mpi\": {\"enabled\": True, "
            "\"processes_per_host\": <GPUs per instance>}"
        )
    if strategy in ("torch_distributed", "pytorchddp") and framework != "pytorch":
        raise ValueError(f"distribution.{strategy} is PyTorch-only; for {framework} use smdistributed or mpi")
    if strategy in ("parameter_server", "multi_worker_mirrored_strategy") and framework != "tensorflow":
        raise ValueError(f"distribution.{strategy} is TensorFlow-only; for PyTorch use torch_distributed")
    if not local:
        if strategy == "pytorchddp":
            _check_pytorchddp(framework_version, instance_type)
        else:
            support.check_distribution_support(strategy, framework, framework_version, instance_type)

    smp = None
    if strategy == "modelparallel":
        try:
            smp = SMPParameters.model_validate(smd.modelparallel.parameters)  # type: ignore[union-attr]
        except ValidationError as err:
            raise ValueError(validation_error_text(MP_FIELD, err)) from None
        with _naming(MP_FIELD):
            smp.check_framework(framework)
            if local and framework == "pytorch":  # a local job runs sagelaunch's own SMP: refuse what it lacks now
                check_local_support(smp)

    # processes per host: MPI's explicit count, else one per GPU, else the minimum the strategy needs
    given = opts.mpi.processes_per_host if (opts.mpi and mpi_on) else None
    if given is not None:
        processes = given
        if gpus_per_host and given > gpus_per_host:
            raise ValueError(
                f"distribution.mpi.processes_per_host={given} exceeds the {gpus_per_host} GPUs of "
                f"{instance_type}; allowed: 1..{gpus_per_host}"
            )
    elif gpus_per_host:
        processes = gpus_per_host
    elif smp is not None:
        processes = smp.pipeline_parallel_degree * smp.tensor_parallel_degree
    else:
        processes = 1
    if smp is not None:
        with _naming(MP_FIELD):
            check_world(smp, instance_count * processes, gpus_per_host)

    hp: dict[str, Any] = {}
    if opts.mpi is not None:
        hp["sagemaker_mpi_enabled"] = mpi_on
        if mpi_on:
            hp["sagemaker_mpi_num_of_processes_per_host"] = processes
            hp["sagemaker_mpi_custom_mpi_options"] = opts.mpi.custom_mpi_options
    mp_parameters = None
    if smp is not None:
        mp_parameters = dict(smd.modelparallel.parameters)  # type: ignore[union-attr]
        hp["mp_parameters"] = mp_parameters
    if opts.smdistributed is not None:
        hp["sagemaker_distributed_dataparallel_enabled"] = dp_on
        hp["sagemaker_instance_type"] = instance_type
        if dp_on:
            hp["sagemaker_distributed_dataparallel_custom_mpi_options"] = smd.dataparallel.custom_mpi_options  # type: ignore[union-attr]
    if strategy == "torch_distributed":
        hp.update(sagemaker_torch_distributed_enabled=True, sagemaker_instance_type=instance_type)
    elif strategy == "pytorchddp":  # SDK v2 2.257 sends it as smdistributed dataparallel (SMDDP)
        hp.update(sagemaker_distributed_dataparallel_enabled=True, sagemaker_instance_type=instance_type,
                  sagemaker_distributed_dataparallel_custom_mpi_options="")
    elif strategy == "parameter_server":
        hp["sagemaker_parameter_server_enabled"] = True
    elif strategy == "multi_worker_mirrored_strategy":
        hp["sagemaker_multi_worker_mirrored_strategy_enabled"] = True
    return DistributionPlan(strategy, processes, hp, mp_parameters, smp)
