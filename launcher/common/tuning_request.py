"""The CreateHyperParameterTuningJob request of SDK v2's HyperparameterTuner.fit (pure: no network).

The TrainingJobDefinition is made from the estimator's own CreateTrainingJob request (one compiler for both), as
v2 makes it from the same estimator: the tuned names leave the static hyperparameters, ResourceConfig becomes
HyperParameterTuningResourceConfig, and what a tuning job's definition does not take (Debugger, profiler, tags,
the metrics time series) is left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STRATEGIES = ("Bayesian", "Random", "Hyperband", "Grid")
OBJECTIVE_TYPES = ("Maximize", "Minimize")
EARLY_STOPPING_TYPES = ("Off", "Auto")
RANGE_KEYS = {"Continuous": "ContinuousParameterRanges", "Categorical": "CategoricalParameterRanges",
              "Integer": "IntegerParameterRanges"}
# CreateTrainingJob keys a TrainingJobDefinition holds as they are
_KEPT = ("RoleArn", "OutputDataConfig", "StoppingCondition", "InputDataConfig", "VpcConfig", "CheckpointConfig",
         "Environment", "RetryStrategy")
_FLAGS = ("EnableNetworkIsolation", "EnableInterContainerTrafficEncryption", "EnableManagedSpotTraining")


@dataclass(frozen=True)
class TuningSettings:
    """What HyperparameterTuner asks for, in the request's words."""

    job_name: str
    strategy: str
    objective_metric_name: str
    objective_type: str
    max_parallel_jobs: int
    ranges: dict[str, list[dict[str, Any]]]  # "Continuous"/"Categorical"/"Integer" → as_tuning_range dicts
    max_jobs: int | None = None
    max_runtime_in_seconds: int | None = None
    early_stopping_type: str = "Off"
    random_seed: int | None = None
    metric_definitions: list[dict[str, str]] | None = None
    static_extra: dict[str, str] = field(default_factory=dict)  # v2's estimator class metadata
    warm_start: dict[str, Any] | None = None
    strategy_config: dict[str, Any] | None = None
    completion_criteria: dict[str, Any] | None = None
    tags: list[dict[str, str]] | None = None


def training_job_definition(training: dict[str, Any], s: TuningSettings) -> dict[str, Any]:
    tuned = {r["Name"] for kind in s.ranges.values() for r in kind}
    static = {k: v for k, v in (training.get("HyperParameters") or {}).items() if k not in tuned}
    static.update(s.static_extra)
    resources = training["ResourceConfig"]
    algorithm = training["AlgorithmSpecification"]
    definition: dict[str, Any] = {"StaticHyperParameters": static,
                                  "HyperParameterTuningResourceConfig": {
                                      k: resources[k] for k in ("InstanceCount", "InstanceType", "VolumeSizeInGB",
                                                                "VolumeKmsKeyId") if k in resources},
                                  "AlgorithmSpecification": {"TrainingInputMode": algorithm["TrainingInputMode"],
                                                             "TrainingImage": algorithm["TrainingImage"]}}
    metrics = s.metric_definitions if s.metric_definitions is not None else algorithm.get("MetricDefinitions")
    if metrics:
        definition["AlgorithmSpecification"]["MetricDefinitions"] = [dict(m) for m in metrics]
    definition.update({k: training[k] for k in _KEPT if k in training})
    definition.update({k: True for k in _FLAGS if training.get(k)})
    return definition


def create_tuning_job_request(training: dict[str, Any], s: TuningSettings) -> dict[str, Any]:
    """CreateHyperParameterTuningJob with the keys SDK v2 2.257 sends (optional ones only when set; all three range
    lists always)."""
    limits: dict[str, Any] = {"MaxParallelTrainingJobs": s.max_parallel_jobs}
    if s.max_jobs is not None:
        limits["MaxNumberOfTrainingJobs"] = s.max_jobs
    if s.max_runtime_in_seconds is not None:
        limits["MaxRuntimeInSeconds"] = s.max_runtime_in_seconds
    config: dict[str, Any] = {
        "Strategy": s.strategy, "ResourceLimits": limits, "TrainingJobEarlyStoppingType": s.early_stopping_type,
        "HyperParameterTuningJobObjective": {"Type": s.objective_type, "MetricName": s.objective_metric_name},
        "ParameterRanges": {key: list(s.ranges.get(kind, [])) for kind, key in RANGE_KEYS.items()}}
    if s.random_seed is not None:
        config["RandomSeed"] = s.random_seed
    if s.strategy_config is not None:
        config["StrategyConfig"] = s.strategy_config
    if s.completion_criteria is not None:
        config["TuningJobCompletionCriteria"] = s.completion_criteria
    request: dict[str, Any] = {"HyperParameterTuningJobName": s.job_name, "HyperParameterTuningJobConfig": config,
                               "TrainingJobDefinition": training_job_definition(training, s)}
    if s.warm_start is not None:
        request["WarmStartConfig"] = s.warm_start
    if s.tags:
        request["Tags"] = s.tags
    return request
