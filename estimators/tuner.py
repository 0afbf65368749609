"""SDK v2's `HyperparameterTuner` (sagemaker.tuner): a tuning job over an estimator's hyperparameters.

On SageMaker, `fit` sends v2's CreateHyperParameterTuningJob (`launcher/common/tuning_request.py`: the definition is made from
the estimator's own CreateTrainingJob request). With a local estimator (instance_type="local") the trials run here as
local jobs (`estimators/tuner_local.py`: Optuna's searches under v2's strategy names). Either way `wait`,
`best_training_job`, `best_estimator`, `analytics().dataframe()`, `deploy` and `attach` answer as v2's do.
"""

from __future__ import annotations

import json
import time
from contextlib import nullcontext
from typing import Any

from sagelaunch.estimators import field_checks as check
from sagelaunch.estimators.base import _session_options
from sagelaunch.estimators.parameter_ranges import CategoricalParameter, ParameterRange
from sagelaunch.estimators.tuner_attach import attached_tuner
from sagelaunch.estimators.tuner_local import run_local_tuning
from sagelaunch.estimators.tuning_configs import StrategyConfig, WarmStartConfig, WarmStartTypes
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.names import check_name, sanitize_base
from sagelaunch.jobspec.suggest import did_you_mean, fix_from_hint
from sagelaunch.launcher import (
    EARLY_STOPPING_TYPES,
    OBJECTIVE_TYPES,
    STRATEGIES,
    TuningSettings,
    analytics_rows,
    create_tuning_job_request,
    make_console,
    prepared_request,
    start_tuning_job,
)

# v2's estimator class metadata, sent with a framework estimator's static hyperparameters
CLASS_METADATA = {"PyTorch": "sagemaker.pytorch.estimator", "TensorFlow": "sagemaker.tensorflow.estimator",
                  "HuggingFace": "sagemaker.huggingface.estimator", "Estimator": "sagemaker.estimator"}
TUNING_NAME_LIMIT = 32  # SageMaker's limit on a tuning job's name


class HyperparameterTuningJobAnalytics:
    """v2's analytics of a tuning job — `sagemaker.HyperparameterTuningJobAnalytics(name, sagemaker_session)` or a
    tuner's `analytics()`: `dataframe()` holds one row per training job, `tuning_ranges` the searched ranges."""

    def __init__(self, hyperparameter_tuning_job_name: Any, sagemaker_session: Any = None) -> None:
        job = hyperparameter_tuning_job_name
        if isinstance(job, str):  # v2's form: the job's name (a local tuning job of this process, else SageMaker's)
            from sagelaunch.estimators.tuner_attach import tuning_job_named  # lazy: it imports the package, which imports this module

            job = tuning_job_named(job, sagemaker_session)
        self.job = job
        self.name = job.name

    def __repr__(self) -> str:
        return f"<sagemaker.HyperparameterTuningJobAnalytics for {self.name}>"

    @property
    def tuning_ranges(self) -> dict[str, Any]:
        """v2's: each tuned hyperparameter's range as DescribeHyperParameterTuningJob gives it, by name."""
        config = self.description()["HyperParameterTuningJobConfig"]
        return {item["Name"]: item for ranges in config["ParameterRanges"].values() for item in ranges}

    def training_job_summaries(self) -> list[dict[str, Any]]:
        return self.job.training_job_summaries()

    def description(self) -> dict[str, Any]:
        return self.job.describe()

    def dataframe(self, force_refresh: bool = False) -> Any:
        import pandas as pd

        return pd.DataFrame(analytics_rows(self.training_job_summaries()))


def _choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        fix = fix_from_hint(did_you_mean(str(value), allowed), f"use one of {', '.join(allowed)}")
        raise SagelaunchError(f"{name}={value!r} is not one of {', '.join(allowed)}; {fix}", field=name, value=value,
                              allowed=", ".join(allowed), fix=fix)
    return value


class HyperparameterTuner:
    """v2's HyperparameterTuner: its arguments in its order."""

    def __init__(self, estimator: Any, objective_metric_name: str, hyperparameter_ranges: dict[str, ParameterRange],
                 metric_definitions: list[dict[str, str]] | None = None, strategy: str = "Bayesian",
                 objective_type: str = "Maximize", max_jobs: int | None = None, max_parallel_jobs: int = 1,
                 max_runtime_in_seconds: int | None = None, tags: list[dict[str, str]] | None = None,
                 base_tuning_job_name: str | None = None, warm_start_config: WarmStartConfig | None = None,
                 strategy_config: StrategyConfig | None = None, completion_criteria_config: Any = None,
                 early_stopping_type: str = "Off", estimator_name: str | None = None,
                 random_seed: int | None = None, autotune: bool = False,
                 hyperparameters_to_keep_static: list[str] | None = None) -> None:
        for option, value in (("estimator_name", estimator_name), ("autotune", autotune or None),
                              ("hyperparameters_to_keep_static", hyperparameters_to_keep_static),
                              ("completion_criteria_config", completion_criteria_config)):
            if value is not None:
                fix = f"drop {option} (one estimator per tuner; ranges given explicitly)"
                raise SagelaunchError(f"HyperparameterTuner({option}=…) is not implemented by sagelaunch; {fix}",
                                      field=option, value=value, allowed="None", fix=fix)
        if not hyperparameter_ranges:
            raise SagelaunchError("hyperparameter_ranges is empty: name at least one range to tune",
                                  field="hyperparameter_ranges", value=hyperparameter_ranges,
                                  allowed="{name: ContinuousParameter/IntegerParameter/CategoricalParameter}",
                                  fix="e.g. {'lr': ContinuousParameter(0.001, 0.1)}")
        for name, value in hyperparameter_ranges.items():
            if not isinstance(value, ParameterRange):
                raise SagelaunchError(f"hyperparameter_ranges[{name!r}]={value!r} is not a parameter range",
                                      field=f"hyperparameter_ranges[{name!r}]", value=value,
                                      allowed="ContinuousParameter, IntegerParameter or CategoricalParameter",
                                      fix="e.g. ContinuousParameter(0.001, 0.1)")
        self.estimator = estimator
        self.objective_metric_name = objective_metric_name
        self._hyperparameter_ranges = dict(hyperparameter_ranges)
        self.metric_definitions = check.metric_definitions(metric_definitions)
        self.strategy = _choice("strategy", strategy, STRATEGIES)
        self.objective_type = _choice("objective_type", objective_type, OBJECTIVE_TYPES)
        self.early_stopping_type = _choice("early_stopping_type", early_stopping_type, EARLY_STOPPING_TYPES)
        if max_jobs is None and strategy != "Grid":
            max_jobs = 1  # v2's default for every strategy but Grid (whose grid size decides)
        for name, value in (("max_jobs", max_jobs), ("max_parallel_jobs", max_parallel_jobs)):
            if value is not None and (not isinstance(value, int) or value < 1):
                raise SagelaunchError(f"{name}={value!r} must be a whole number of at least 1", field=name,
                                      value=value, allowed="1 or more", fix=f"set {name}=1 or more")
        self.max_jobs, self.max_parallel_jobs = max_jobs, max_parallel_jobs
        self.max_runtime_in_seconds = max_runtime_in_seconds
        self.tags = check.tags(tags)
        self.base_tuning_job_name = base_tuning_job_name
        self.warm_start_config = warm_start_config
        self.strategy_config = strategy_config
        self.random_seed = random_seed
        self.latest_tuning_job: Any = None
        self._current_job_name: str | None = None

    # ------------------------------------------------------------ what is sent
    def hyperparameter_ranges(self) -> dict[str, list[dict[str, Any]]]:
        """v2's: ParameterRanges by kind; categorical values JSON-encoded for a framework estimator's image."""
        json_values = getattr(self.estimator, "framework", "generic") != "generic"
        ranges: dict[str, list[dict[str, Any]]] = {"Continuous": [], "Categorical": [], "Integer": []}
        for name, value in self._hyperparameter_ranges.items():
            if isinstance(value, CategoricalParameter) and json_values:
                ranges["Categorical"].append(value.as_json_range(name))
            else:
                ranges[value.kind].append(value.as_tuning_range(name))
        return ranges

    def _static_extra(self, include_cls_metadata: bool) -> dict[str, str]:
        cls_name = type(self.estimator).__name__
        framework = getattr(self.estimator, "framework", "generic") != "generic"
        if not (framework or include_cls_metadata) or cls_name not in CLASS_METADATA:
            return {}
        return {"sagemaker_estimator_class_name": json.dumps(cls_name),
                "sagemaker_estimator_module": json.dumps(CLASS_METADATA[cls_name])}

    def _settings(self, name: str, include_cls_metadata: bool) -> Any:
        return TuningSettings(
            job_name=name, strategy=self.strategy, objective_metric_name=self.objective_metric_name,
            objective_type=self.objective_type, max_parallel_jobs=self.max_parallel_jobs,
            ranges=self.hyperparameter_ranges(), max_jobs=self.max_jobs,
            max_runtime_in_seconds=self.max_runtime_in_seconds, early_stopping_type=self.early_stopping_type,
            random_seed=self.random_seed, metric_definitions=self.metric_definitions,
            static_extra=self._static_extra(include_cls_metadata),
            warm_start=self.warm_start_config.to_input_req() if self.warm_start_config else None,
            strategy_config=self.strategy_config.to_input_req() if self.strategy_config else None, tags=self.tags)

    def _tuning_job_name(self, job_name: str | None) -> str:
        """v2's default: <base>-<yymmdd-HHMM> within 32 characters (base: base_tuning_job_name, else the
        estimator's base job name)."""
        if job_name:
            return check_name(job_name, "job_name")
        base = sanitize_base(self.base_tuning_job_name or self.estimator._default_base_job_name())
        stamp = time.strftime("%y%m%d-%H%M", time.gmtime())
        return f"{base[:TUNING_NAME_LIMIT - len(stamp) - 1]}-{stamp}"

    # ------------------------------------------------------------ running
    def fit(self, inputs: Any = None, job_name: str | None = None, include_cls_metadata: bool = False,
            estimator_kwargs: Any = None, wait: bool = True, **kwargs: Any) -> None:
        """Start the tuning job (v2's fit): on SageMaker CreateHyperParameterTuningJob; locally the trials run here,
        each a local training job, inside fit (so fit returns when they have ended, wait=False too; README says so)."""
        if estimator_kwargs is not None or kwargs:
            given = "estimator_kwargs" if estimator_kwargs is not None else sorted(kwargs)[0]
            raise SagelaunchError(f"HyperparameterTuner.fit({given}=…) is not implemented by sagelaunch (one "
                                  "estimator per tuner)", field=given, value=estimator_kwargs or kwargs,
                                  allowed="inputs, job_name, include_cls_metadata, wait", fix=f"drop {given}")
        name = self._tuning_job_name(job_name)
        self._current_job_name = name
        settings = self._settings(name, include_cls_metadata)
        if is_local(self.estimator.resolved.instance_type):
            self.latest_tuning_job = run_local_tuning(self, settings, inputs)
            return
        self.latest_tuning_job = self._start_on_sagemaker(settings, inputs, job_name)
        if wait:
            self.latest_tuning_job.wait()

    def _start_on_sagemaker(self, settings: Any, inputs: Any, job_name: str | None) -> Any:
        """CreateHyperParameterTuningJob. Its training definition is the estimator's request for `job_name` — as
        v2's `_prepare_for_training(job_name)`: without one, the estimator's own generated name (full timestamp),
        which names the code's upload folder and `sagemaker_job_name`, not the tuning job's name."""
        est = self.estimator
        est.check_files()
        given = None if est._session_made else est.sagemaker_session
        session = _session_options(given, est.resolved.instance_type)
        options: dict[str, Any] = {}
        with session.scope if session else nullcontext():
            spec = est.to_spec(job_name, inputs)
            if session:
                spec = session.apply(spec, options)
            training, _ = prepared_request(spec, make_console(), options.get("bucket"), training_job=False)
            request = create_tuning_job_request(training, settings)
            return start_tuning_job(request, spec.region, session.parts.boto_session if session else None)

    def wait(self) -> None:
        self._require_job().wait()

    def describe(self) -> dict[str, Any]:
        return self._require_job().describe()

    def stop_tuning_job(self) -> None:
        self._require_job().stop()

    def _require_job(self) -> Any:
        if self.latest_tuning_job is None:
            raise SagelaunchError("no tuning job yet: call fit() first, or HyperparameterTuner.attach(name)",
                                  field="latest_tuning_job", value=None, allowed="a tuning job",
                                  fix="call fit() first, or HyperparameterTuner.attach(name)")
        return self.latest_tuning_job

    # ------------------------------------------------------------ results
    def best_training_job(self) -> str:
        """v2's: the name of the best training job so far (DescribeHyperParameterTuningJob's BestTrainingJob)."""
        description = self.describe()
        best = description.get("BestTrainingJob")
        if not best:
            fix = "wait for a training job of the tuning job to finish with the objective metric"
            raise SagelaunchError(f"tuning job {self._require_job().name} has no best training job yet "
                                  f"({description.get('HyperParameterTuningJobStatus')}); {fix}",
                                  field="BestTrainingJob", value=None, allowed="a finished training job", fix=fix)
        return best["TrainingJobName"]

    def best_estimator(self, best_training_job: Any = None) -> Any:
        """v2's: the estimator of the best training job, attached."""
        name = best_training_job["TrainingJobName"] if isinstance(best_training_job, dict) else (
            best_training_job or self.best_training_job())
        return type(self.estimator).attach(name, sagemaker_session=self.estimator.sagemaker_session
                                           if not self.estimator._session_made else None)

    def analytics(self) -> HyperparameterTuningJobAnalytics:
        return HyperparameterTuningJobAnalytics(self._require_job())

    def deploy(self, initial_instance_count: int | None = None, instance_type: str | None = None, *args: Any,
               **kwargs: Any) -> Any:
        """v2's: deploy the best training job's model."""
        return self.best_estimator().deploy(initial_instance_count, instance_type, *args, **kwargs)

    def _warm_start_tuner(self, warm_start_type: str, additional_parents: Any, estimator: Any) -> "HyperparameterTuner":
        parents = {self._require_job().name, *(additional_parents or ())}
        return HyperparameterTuner(
            estimator or self.estimator, self.objective_metric_name, self._hyperparameter_ranges,
            self.metric_definitions, self.strategy, self.objective_type, self.max_jobs, self.max_parallel_jobs,
            self.max_runtime_in_seconds, self.tags, self.base_tuning_job_name,
            WarmStartConfig(warm_start_type, parents), self.strategy_config, None, self.early_stopping_type,
            random_seed=self.random_seed)

    def identical_dataset_and_algorithm_tuner(self, additional_parents: Any = None) -> "HyperparameterTuner":
        """v2's: a tuner warm-started from this one (IdenticalDataAndAlgorithm)."""
        return self._warm_start_tuner(WarmStartTypes.IDENTICAL_DATA_AND_ALGORITHM, additional_parents, None)

    def transfer_learning_tuner(self, additional_parents: Any = None, estimator: Any = None) -> "HyperparameterTuner":
        """v2's: a tuner warm-started from this one (TransferLearning), optionally of another estimator."""
        return self._warm_start_tuner(WarmStartTypes.TRANSFER_LEARNING, additional_parents, estimator)

    @classmethod
    def attach(cls, tuning_job_name: str, sagemaker_session: Any = None, job_details: dict[str, Any] | None = None,
               estimator_cls: Any = None) -> "HyperparameterTuner":
        """v2's: a tuner of an existing tuning job (DescribeHyperParameterTuningJob), its estimator rebuilt from the
        job's definition (the class from estimator_cls, else the definition's class metadata)."""
        return attached_tuner(cls, tuning_job_name, sagemaker_session, job_details, estimator_cls)
