"""`distribution=` as the SageMaker SDK takes it, parsed into what a job needs.

The dict's shapes are `sagelaunch.estimators.distribution_shapes`; each strategy is one object in
`sagelaunch.estimators.distribution_strategies.STRATEGIES`, and `parse_distribution` walks that table: pick the one
enabled strategy, run its checks, decide the processes per host, collect every strategy's hyperparameters
(mp_parameters, sagemaker_mpi_enabled, … as SDK v2 sends them). Facts (which instance types and versions support
what) come from the support catalog, the SMP v1 parameter model and its rules from `sagelaunch.jobspec.smp`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from sagelaunch.estimators.distribution_shapes import DistributionOptions
from sagelaunch.estimators.distribution_strategies import MP_FIELD, MPI, STRATEGIES, DistributionStrategy, JobShape, StrategyName, naming
from sagelaunch.jobspec.errors import SagelaunchError, shown, validation_error
from sagelaunch.jobspec.smp import SMPParameters, check_world

__all__ = ["DistributionPlan", "parse_distribution"]


@dataclass(frozen=True)
class DistributionPlan:
    strategy: StrategyName
    processes_per_host: int
    hyperparameters: dict[str, Any] = field(default_factory=dict)
    mp_parameters: dict[str, Any] | None = None  # the user's parameters dict, as given
    smp: SMPParameters | None = None


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
        return DistributionPlan("none", 1)
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
        return DistributionPlan("none", 1)
    strategy.check(job)
    if not job.local:
        strategy.check_support(job)
    smp = strategy.smp_parameters(job)
    # processes per host: MPI's explicit count, else one per GPU, else the minimum the strategy needs
    processes = MPI.given_processes(job) or gpus_per_host or strategy.min_processes(smp)
    if smp is not None:
        with naming(MP_FIELD):
            check_world(smp, instance_count * processes, gpus_per_host)
    hyperparameters: dict[str, Any] = {}
    for each in STRATEGIES:
        hyperparameters.update(each.hyperparameters(job, each is strategy, processes))
    mp_parameters = hyperparameters.get("mp_parameters")  # the user's dict as sent, when SMP runs the job
    return DistributionPlan(strategy.name, processes, hyperparameters, mp_parameters, smp)


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
