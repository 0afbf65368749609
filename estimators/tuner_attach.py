"""HyperparameterTuner.attach: a tuner rebuilt from DescribeHyperParameterTuningJob, as v2's attach rebuilds it."""

from __future__ import annotations

import json
from typing import Any

import sagelaunch.estimators as estimators
from sagelaunch.estimators.framework_model import region_of
from sagelaunch.estimators.parameter_ranges import (
    CategoricalParameter,
    ContinuousParameter,
    IntegerParameter,
    ParameterRange,
)
from sagelaunch.estimators.session import session_parts
from sagelaunch.estimators.tuning_configs import WarmStartConfig
from sagelaunch.estimators.v2_calls import init_params
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher import default_region, find_tuning_job


def _ranges(config: dict[str, Any]) -> dict[str, ParameterRange]:
    ranges: dict[str, ParameterRange] = {}
    parameter_ranges = config.get("ParameterRanges") or {}
    for item in parameter_ranges.get("ContinuousParameterRanges", []):
        ranges[item["Name"]] = ContinuousParameter(float(item["MinValue"]), float(item["MaxValue"]),
                                                   item.get("ScalingType", "Auto"))
    for item in parameter_ranges.get("IntegerParameterRanges", []):
        ranges[item["Name"]] = IntegerParameter(int(item["MinValue"]), int(item["MaxValue"]),
                                                item.get("ScalingType", "Auto"))
    for item in parameter_ranges.get("CategoricalParameterRanges", []):
        values = [json.loads(v) if v.startswith('"') else v for v in item["Values"]]
        ranges[item["Name"]] = CategoricalParameter(values)
    return ranges


def _estimator_class(static: dict[str, str], estimator_cls: Any) -> Any:
    if estimator_cls is not None:
        return estimator_cls

    name = static.get("sagemaker_estimator_class_name")
    name = json.loads(name) if name else "Estimator"
    cls = getattr(estimators, name, None)
    if cls is None:
        raise SagelaunchError(f"the tuning job's estimator class {name!r} is not one of sagelaunch's; pass "
                              "estimator_cls=", field="estimator_cls", value=name,
                              allowed="Estimator, PyTorch, TensorFlow, HuggingFace", fix="pass estimator_cls=…")
    return cls


def _estimator(definition: dict[str, Any], tuning_name: str, region: str, cls: Any, session: Any) -> Any:
    resources = definition["HyperParameterTuningResourceConfig"]
    description: dict[str, Any] = {"TrainingJobName": tuning_name, "RoleArn": definition.get("RoleArn"),
                   "ResourceConfig": {k: resources[k] for k in ("InstanceCount", "InstanceType", "VolumeSizeInGB",
                                                                 "VolumeKmsKeyId") if k in resources},
                   "AlgorithmSpecification": definition["AlgorithmSpecification"],
                   "HyperParameters": {k: v for k, v in definition.get("StaticHyperParameters", {}).items()
                                       if k not in ("sagemaker_estimator_class_name", "sagemaker_estimator_module")},
                   **{k: definition[k] for k in ("OutputDataConfig", "StoppingCondition", "VpcConfig",
                                                  "EnableNetworkIsolation", "InputDataConfig") if k in definition}}
    params = init_params(cls, description, None, session)
    params["region"] = region
    params.pop("base_job_name", None)
    if "metric_definitions" in cls.argument_names() and definition["AlgorithmSpecification"].get("MetricDefinitions"):
        params["metric_definitions"] = definition["AlgorithmSpecification"]["MetricDefinitions"]
    return cls(**params)


def tuning_job_named(name: str, session: Any) -> Any:
    """The tuning job called `name`: a local one of this process first, else SageMaker's (in the session's region)."""
    boto_session = session_parts(session).boto_session if session is not None else None
    return find_tuning_job(name, region_of(session) or default_region(), boto_session)


def attached_tuner(tuner_cls: Any, name: str, session: Any, job_details: dict[str, Any] | None,
                   estimator_cls: Any) -> Any:
    region = region_of(session) or default_region()
    job = tuning_job_named(name, session)
    local_tuner = getattr(job, "tuner", None)
    if local_tuner is not None and estimator_cls is None:  # a local tuning job of this process: its own tuner
        return local_tuner
    details = job_details or job.describe()
    config, definition = details["HyperParameterTuningJobConfig"], details.get("TrainingJobDefinition")
    if definition is None:
        raise SagelaunchError(f"tuning job {name} has several training job definitions; sagelaunch's tuner takes "
                              "one estimator", field="TrainingJobDefinitions", value=name,
                              allowed="a tuning job of one estimator", fix="attach it with the SageMaker SDK")
    cls = _estimator_class(definition.get("StaticHyperParameters", {}), estimator_cls)
    estimator = _estimator(definition, name, region, cls, session)
    limits = config.get("ResourceLimits", {})
    objective = config["HyperParameterTuningJobObjective"]
    warm = details.get("WarmStartConfig")
    tuner = tuner_cls(
        estimator, objective["MetricName"], _ranges(config),
        definition["AlgorithmSpecification"].get("MetricDefinitions"), config.get("Strategy", "Bayesian"),
        objective["Type"], limits.get("MaxNumberOfTrainingJobs"), limits.get("MaxParallelTrainingJobs", 1),
        limits.get("MaxRuntimeInSeconds"), None, None,
        None if not warm else _warm_start(warm), None, None, config.get("TrainingJobEarlyStoppingType", "Off"),
        random_seed=config.get("RandomSeed"))
    tuner.latest_tuning_job = job
    tuner._current_job_name = name
    return tuner


def _warm_start(warm: dict[str, Any]) -> Any:
    return WarmStartConfig(warm["WarmStartType"],
                           {p["HyperParameterTuningJobName"] for p in warm["ParentHyperParameterTuningJobs"]})
