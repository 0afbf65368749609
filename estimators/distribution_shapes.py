"""The shapes `distribution=` takes in the SageMaker SDK v2, as pydantic models (unknown keys refused by name).

{"smdistributed": {"modelparallel": {"enabled": True, "parameters": {...}}}, "mpi": {"enabled": True,
"processes_per_host": 8, "custom_mpi_options": "..."}}, {"smdistributed": {"dataparallel": {"enabled": True}}},
{"torch_distributed": {"enabled": True}}, {"pytorchddp": {"enabled": True}}, and for TensorFlow
{"parameter_server": ...}, {"multi_worker_mirrored_strategy": ...}.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DataParallelOptions", "DistributionOptions", "EnabledOptions", "MPIOptions", "ModelParallelOptions",
    "SMDistributedOptions",
]


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
