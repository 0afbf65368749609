"""`DistributionSpec`: the spec's typed `distribution=`, each strategy's own options, serialised once into the
hyperparameters SDK v2 sends (mp_parameters, sagemaker_mpi_*, sagemaker_distributed_dataparallel_*, …).

The estimators fill it (`sagelaunch.estimators.distribution` checks the dict first); the request compiler writes it
(`hyperparameters`); the local supervisor and `smp.init` read the SMP parameters back as the same `SMPParameters`
(`mp_parameters_of`).
"""

from __future__ import annotations

import json
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from sagelaunch.jobspec.smp import SMPParameters

StrategyName = Literal[
    "none", "modelparallel", "dataparallel", "torch_distributed", "pytorchddp", "mpi",
    "parameter_server", "multi_worker_mirrored_strategy",
]
MODEL_PARALLEL_DEGREES = ("tensor_parallel_degree", "pipeline_parallel_degree", "sharded_data_parallel_degree")


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class MPISettings(_Part):
    """`distribution["mpi"]` as given (SDK v2 sends its entries whenever the section is given, enabled or not)."""

    enabled: bool = False
    custom_mpi_options: str = ""


class ModelParallelSettings(_Part):
    """SMP v1's parameters. `parameters` is the dict as the user gave it: SDK v2 sends exactly that as
    mp_parameters (its spelling of aliases, its values), so it is kept; `smp` is the same, typed and checked."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True, ignored_types=(cached_property,))
    parameters: dict[str, Any]

    @cached_property
    def smp(self) -> SMPParameters:
        return SMPParameters.model_validate(self.parameters)

    @model_validator(mode="after")
    def _checked(self) -> ModelParallelSettings:
        self.smp  # noqa: B018 -- a spec never carries parameters smp.init would refuse
        return self


class DataParallelSettings(_Part):
    """`distribution["smdistributed"]["dataparallel"]` when it runs the job."""

    custom_mpi_options: str = ""


class DistributionSpec(_Part):
    """The job's distribution: which strategy runs it and the sections SDK v2 writes entries for."""

    strategy: StrategyName = "none"
    given: bool = False  # a distribution= was given (the toolkit's distribution_hosts)
    mpi: MPISettings | None = None  # the mpi section, when given
    smdistributed: bool = False  # an smdistributed section was given (v2 then sends the dataparallel entries)
    modelparallel: ModelParallelSettings | None = None  # when SMP runs the job
    dataparallel: DataParallelSettings | None = None  # when smdistributed dataparallel runs the job

    @property
    def mpi_enabled(self) -> bool:
        return self.mpi is not None and self.mpi.enabled

    @property
    def smp(self) -> SMPParameters | None:
        return self.modelparallel.smp if self.modelparallel is not None else None

    def hyperparameters(self, instance_type: str, processes_per_host: int) -> dict[str, Any]:
        """SDK v2's entries, in its order: mpi, mp_parameters, smdistributed, then the strategy's own."""
        out: dict[str, Any] = {}
        if self.mpi is not None:
            out["sagemaker_mpi_enabled"] = self.mpi.enabled
            if self.mpi.enabled:
                out.update(sagemaker_mpi_num_of_processes_per_host=processes_per_host,
                           sagemaker_mpi_custom_mpi_options=self.mpi.custom_mpi_options)
        if self.modelparallel is not None:
            out["mp_parameters"] = dict(self.modelparallel.parameters)
        if self.smdistributed:
            out.update(sagemaker_distributed_dataparallel_enabled=self.strategy == "dataparallel",
                       sagemaker_instance_type=instance_type)
            if self.dataparallel is not None:
                out["sagemaker_distributed_dataparallel_custom_mpi_options"] = self.dataparallel.custom_mpi_options
        if self.strategy == "torch_distributed":
            out.update(sagemaker_torch_distributed_enabled=True, sagemaker_instance_type=instance_type)
        elif self.strategy == "pytorchddp":  # SDK v2 2.257 runs pytorchddp as smdistributed dataparallel
            out.update(sagemaker_distributed_dataparallel_enabled=True, sagemaker_instance_type=instance_type,
                       sagemaker_distributed_dataparallel_custom_mpi_options="")
        elif self.strategy in ("parameter_server", "multi_worker_mirrored_strategy"):
            out[f"sagemaker_{self.strategy}_enabled"] = True
        return out


def mp_parameters_of(raw: str) -> SMPParameters:
    """SM_HP_MP_PARAMETERS (the mp_parameters hyperparameter, JSON) read back as the typed parameters."""
    return SMPParameters.model_validate(json.loads(raw))


def model_parallel_degrees(params: SMPParameters) -> dict[str, int]:
    """The degrees above 1 (pipeline, tensor, sharded data parallel): what makes a job model-parallel."""
    return {name: getattr(params, name) for name in MODEL_PARALLEL_DEGREES if getattr(params, name) > 1}
