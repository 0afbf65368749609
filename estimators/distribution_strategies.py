"""One small object per strategy of `distribution=`, and the table `parse_distribution` walks.

Each strategy says where it sits in the dict, which frameworks take it, the support catalog's hardware and
version rules it answers to on SageMaker, what a local job refuses, the processes per host it needs at least,
(the hyperparameters SDK v2 sends for it are written by jobspec.distribution.DistributionSpec). The shape follows torchtitan's
ParallelDims with one apply per technique: adding a strategy is adding one object to `STRATEGIES`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from sagelaunch.estimators.distribution_shapes import (
    DataParallelOptions, DistributionOptions, EnabledOptions, MPIOptions, ModelParallelOptions,
)
from sagelaunch.jobspec.distribution import StrategyName
from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.errors import SagelaunchError, parts_of, validation_error
from sagelaunch.jobspec.smp import SMPParameters, check_local_support
from sagelaunch.jobspec.catalog import FRAMEWORK_CLASS_NAMES

__all__ = ["MP_FIELD", "MPI", "STRATEGIES", "DistributionStrategy", "JobShape", "StrategyName", "naming"]


MP_FIELD = "distribution.smdistributed.modelparallel.parameters"


@dataclass(frozen=True)
class JobShape:
    """What the strategies' checks see of the job."""

    options: DistributionOptions
    framework: str
    framework_version: str
    instance_type: str
    instance_count: int
    gpus_per_host: int

    @property
    def local(self) -> bool:
        return is_local(self.instance_type)


@contextmanager
def naming(field: str) -> Iterator[None]:
    """sagelaunch.jobspec.smp's rules speak of mp_parameters (smp.init shares them); an estimator's error names its field."""
    try:
        yield
    except ValueError as err:
        parts = parts_of(err)
        parts["field"] = f"{field}.{parts['field']}" if parts.get("field") else field
        raise SagelaunchError(f"{field}: {err}", **parts) from None


class DistributionStrategy:
    """A strategy's defaults: both frameworks, no catalog rule, nothing refused locally, one process, no entries."""

    name: StrategyName
    key: str  # its place in the dict, as messages name it
    frameworks: tuple[str, ...] = ("pytorch", "tensorflow")
    instead: str = ""  # what to use for another framework ({framework} is the job's)
    catalog_entry: str | None = None  # the support catalog's rules for SageMaker jobs (jobspec/support_matrix.json)
    exclusive: bool = True  # one exclusive strategy per job; MPI launches the others' processes too

    def options(self, opts: DistributionOptions) -> BaseModel | None:
        raise NotImplementedError

    def enabled(self, opts: DistributionOptions) -> bool:
        given = self.options(opts)
        return bool(given is not None and getattr(given, "enabled", False))

    def check(self, job: JobShape) -> None:
        """The rules of the dict itself, before any hardware rule."""
        if job.framework not in self.frameworks:
            only = FRAMEWORK_CLASS_NAMES[self.frameworks[0]]
            raise SagelaunchError(f"distribution.{self.name} is {only}-only; {self.instead.format(framework=job.framework)}",
                                  field=f"distribution.{self.name}", value=job.framework, allowed=only,
                                  fix=self.instead.format(framework=job.framework))

    def check_support(self, job: JobShape) -> None:
        """The catalog's instance-type and version rules; SageMaker jobs only (a local job has no such image)."""
        from sagelaunch.jobspec import catalog  # lazy: the matrix loads on first use

        if self.catalog_entry is not None:
            catalog.check_distribution_support(self.catalog_entry, job.framework, job.framework_version,
                                               job.instance_type)

    def smp_parameters(self, job: JobShape) -> SMPParameters | None:
        """The SMP v1 parameters the job runs with, checked (and refused locally where sagelaunch lacks them)."""
        return None

    def min_processes(self, smp: SMPParameters | None) -> int:
        """Processes per host when neither MPI nor the GPUs say."""
        return 1



class _MPI(DistributionStrategy):
    name, key, exclusive = "mpi", "mpi", False

    def options(self, opts: DistributionOptions) -> MPIOptions | None:
        return opts.mpi

    def given_processes(self, job: JobShape) -> int | None:
        """MPI's explicit processes_per_host, checked against the instance's GPUs."""
        mpi = job.options.mpi
        given = mpi.processes_per_host if mpi is not None and mpi.enabled else None
        if given is not None and job.gpus_per_host and given > job.gpus_per_host:
            raise SagelaunchError(
                f"distribution.mpi.processes_per_host={given} exceeds the {job.gpus_per_host} GPUs of "
                f"{job.instance_type}; allowed: 1..{job.gpus_per_host}",
                field="distribution.mpi.processes_per_host", value=given, allowed=f"1..{job.gpus_per_host}",
                fix=f"set processes_per_host to at most {job.gpus_per_host}",
            )
        return given



class _ModelParallel(DistributionStrategy):
    name, key, catalog_entry = "modelparallel", "smdistributed.modelparallel", "modelparallel"

    def options(self, opts: DistributionOptions) -> ModelParallelOptions | None:
        return opts.smdistributed.modelparallel if opts.smdistributed else None

    def _parameters(self, job: JobShape) -> dict[str, Any]:
        given = self.options(job.options)
        assert given is not None  # only asked of the enabled strategy
        return given.parameters

    def check(self, job: JobShape) -> None:
        if not MPI.enabled(job.options):
            raise SagelaunchError(
                "distribution.smdistributed.modelparallel needs MPI: add \"mpi\": {\"enabled\": True, "
                "\"processes_per_host\": <GPUs per instance>}",
                field="distribution.mpi", value=job.options.mpi, allowed="MPI enabled",
                fix='add "mpi": {"enabled": True, "processes_per_host": <GPUs per instance>}',
            )
        super().check(job)

    def smp_parameters(self, job: JobShape) -> SMPParameters:
        try:
            smp = SMPParameters.model_validate(self._parameters(job))
        except ValidationError as err:
            raise validation_error(SagelaunchError, MP_FIELD, err) from None
        with naming(MP_FIELD):
            smp.check_framework(job.framework)
            if job.local and job.framework == "pytorch":  # a local job runs sagelaunch's own SMP: refuse what it lacks
                check_local_support(smp)
        return smp

    def min_processes(self, smp: SMPParameters | None) -> int:
        assert smp is not None
        return smp.pipeline_parallel_degree * smp.tensor_parallel_degree



class _DataParallel(DistributionStrategy):
    name, key, catalog_entry = "dataparallel", "smdistributed.dataparallel", "dataparallel"

    def options(self, opts: DistributionOptions) -> DataParallelOptions | None:
        return opts.smdistributed.dataparallel if opts.smdistributed else None



class _PyTorchStrategy(DistributionStrategy):
    """torch_distributed and pytorchddp: PyTorch's own."""

    frameworks, instead = ("pytorch",), "for {framework} use smdistributed or mpi"


class _TorchDistributed(_PyTorchStrategy):
    name = key = catalog_entry = "torch_distributed"

    def options(self, opts: DistributionOptions) -> EnabledOptions | None:
        return opts.torch_distributed



class _PyTorchDDP(_PyTorchStrategy):
    """SDK v2 2.257 rewrites pytorchddp into smdistributed dataparallel: its entries and hardware rules apply."""

    name = key = catalog_entry = "pytorchddp"

    def options(self, opts: DistributionOptions) -> EnabledOptions | None:
        return opts.pytorchddp

    def check_support(self, job: JobShape) -> None:
        super().check_support(job)
        try:
            DATAPARALLEL.check_support(job)
        except ValueError as err:
            raise SagelaunchError(
                f"distribution.pytorchddp: SageMaker SDK v2 runs pytorchddp as SageMaker's data-parallel library "
                f"(smdistributed dataparallel), so its limits apply — {err}; for plain PyTorch DDP on any GPU "
                "instance use {'torch_distributed': {'enabled': True}}",
                **{**parts_of(err), "fix": "for plain PyTorch DDP on any GPU instance use "
                                           "{'torch_distributed': {'enabled': True}}"},
            ) from None



class _TensorFlowStrategy(DistributionStrategy):
    """parameter_server and multi_worker_mirrored_strategy: TensorFlow's own, one entry each."""

    frameworks, instead = ("tensorflow",), "for PyTorch use torch_distributed"

    def options(self, opts: DistributionOptions) -> EnabledOptions | None:
        given = getattr(opts, self.name)
        assert given is None or isinstance(given, EnabledOptions)
        return given



class _ParameterServer(_TensorFlowStrategy):
    name = key = "parameter_server"


class _MultiWorkerMirrored(_TensorFlowStrategy):
    name = key = "multi_worker_mirrored_strategy"


MPI, DATAPARALLEL = _MPI(), _DataParallel()
# The parser walks this table: the exclusive ones in the order errors list them.
STRATEGIES: tuple[DistributionStrategy, ...] = (
    MPI, _ModelParallel(), DATAPARALLEL, _TorchDistributed(), _PyTorchDDP(), _ParameterServer(),
    _MultiWorkerMirrored(),
)
