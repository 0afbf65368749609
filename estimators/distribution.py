"""`distribution=` as the SageMaker SDK takes it, parsed into what a job needs.

The dict's shapes are `sagelaunch.estimators.distribution_shapes`; each strategy is one object in
`sagelaunch.estimators.distribution_strategies.STRATEGIES`, and `parse_distribution` walks that table: pick the one
enabled strategy, run its checks, decide the processes per host, and record the sections SDK v2 writes hyperparameters
for in the spec's typed `DistributionSpec` (jobspec.distribution, which writes mp_parameters, sagemaker_mpi_enabled, …
once). Facts (which instance types and versions support
what) come from the support catalog, the SMP v1 parameter model and its rules from `sagelaunch.jobspec.smp`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from sagelaunch.estimators.distribution_shapes import DistributionOptions
from sagelaunch.estimators.distribution_strategies import MP_FIELD, MPI, STRATEGIES, DistributionStrategy, JobShape, StrategyName, naming
from sagelaunch.jobspec.distribution import DataParallelSettings, DistributionSpec, ModelParallelSettings, MPISettings
from sagelaunch.jobspec.errors import SagelaunchError, shown, validation_error
from sagelaunch.jobspec.smp import SMPParameters, check_world

__all__ = ["DistributionPlan", "parse_distribution"]


@dataclass(frozen=True)
class DistributionPlan:
    strategy: StrategyName
    processes_per_host: int
    instance_type: str
    distribution: DistributionSpec = field(default_factory=DistributionSpec)  # the spec's part
    smp: SMPParameters | None = None  # checked with the job's framework and world (None without SMP)

    @property
    def mp_parameters(self) -> dict[str, Any] | None:
        """The SMP parameters as the user gave them (sent as mp_parameters); None without SMP."""
        return self.distribution.modelparallel.parameters if self.distribution.modelparallel else None

    @property
    def hyperparameters(self) -> dict[str, Any]:
        """What the request's HyperParameters gain (jobspec.distribution writes them)."""
        return self.distribution.hyperparameters(self.instance_type, self.processes_per_host)


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
    if not distribution:
        return DistributionPlan("none", 1, instance_type)
    if not isinstance(distribution, dict):
        raise SagelaunchError(f"distribution={shown(distribution)} must be a dict such as {{'torch_distributed': {{'enabled': True}}}}",
                              field="distribution", value=distribution, allowed="a dict of strategies",
                              fix="pass e.g. {'torch_distributed': {'enabled': True}}")
    try:
        options = DistributionOptions.model_validate(distribution)
    except ValidationError as err:
        raise validation_error(SagelaunchError, "distribution", err) from None
    job = JobShape(options, framework, framework_version, instance_type, instance_count, gpus_per_host)
    strategy = _chosen(options)
    if strategy is None:
        return DistributionPlan("none", 1, instance_type, DistributionSpec(given=True))
    strategy.check(job)
    if not job.local:
        strategy.check_support(job)
    smp = strategy.smp_parameters(job)
    # processes per host: MPI's explicit count, else one per GPU, else the minimum the strategy needs
    processes = MPI.given_processes(job) or gpus_per_host or strategy.min_processes(smp)
    if smp is not None:
        with naming(MP_FIELD):
            check_world(smp, instance_count * processes, gpus_per_host)
    return DistributionPlan(strategy.name, processes, instance_type, _spec(options, strategy), smp)


def _spec(options: DistributionOptions, strategy: DistributionStrategy) -> DistributionSpec:
    """The sections SDK v2 writes entries for: mpi and smdistributed whenever given, the strategy's own options."""
    mp = options.smdistributed.modelparallel if options.smdistributed else None
    dp = options.smdistributed.dataparallel if options.smdistributed else None
    return DistributionSpec(
        strategy=strategy.name, given=True, smdistributed=options.smdistributed is not None,
        mpi=MPISettings(enabled=options.mpi.enabled, custom_mpi_options=options.mpi.custom_mpi_options)
        if options.mpi is not None else None,
        modelparallel=ModelParallelSettings(parameters=dict(mp.parameters))
        if strategy.name == "modelparallel" and mp is not None else None,
        dataparallel=DataParallelSettings(custom_mpi_options=dp.custom_mpi_options)
        if strategy.name == "dataparallel" and dp is not None else None)


def _chosen(options: DistributionOptions) -> DistributionStrategy | None:
    """The one enabled strategy; MPI alone when only MPI is on (it also launches the others); None when off."""
    enabled = [s for s in STRATEGIES if s.exclusive and s.enabled(options)]
    if len(enabled) > 1:
        raise SagelaunchError(f"distribution enables {' and '.join(s.key for s in enabled)}; allowed: one strategy per job — keep one",
                              field="distribution", value=[s.key for s in enabled], allowed="one strategy per job",
                              fix="keep one")
    if enabled:
        return enabled[0]
    return MPI if MPI.enabled(options) else None
