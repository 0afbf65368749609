"""A hyperparameter tuning job run here: each trial a local training job, its metrics read from its logs with the
metric_definitions regexes (the last match is the final value, as SageMaker takes it), the search by Optuna under
v2's strategy names (Bayesian: TPE, Random: random sampling, Grid: every combination of the categorical values, in
order),
early_stopping_type="Auto" by the median rule on the objective's values so far (Optuna's MedianPruner, SageMaker's
rule), at most max_parallel_jobs trials at once, and a progress line per trial. What SageMaker alone does
(Hyperband, reverse-logarithmic scaling, a runtime limit) is refused by name before any trial starts.
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
import time
from datetime import datetime, timezone
from typing import Any

from sagelaunch.estimators.parameter_ranges import CategoricalParameter, IntegerParameter
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher import create_tuning_job_request, local_tuning_job
from sagelaunch.launcher import register_local_tuning_job as register_local

POLL_SECONDS = 0.5
LOCAL_STRATEGIES = ("Bayesian", "Random", "Grid")


def _refuse(field: str, value: Any, why: str, fix: str) -> SagelaunchError:
    return SagelaunchError(f"{field}={value!r}: {why} in a local tuning job; {fix}", field=field, value=value,
                           allowed="what local tuning runs", fix=fix)


def check_local_tuning(tuner: Any) -> int:
    """What local tuning cannot do, refused by name; the number of trials to run."""
    if tuner.strategy not in LOCAL_STRATEGIES:
        raise _refuse("strategy", tuner.strategy, "Hyperband is SageMaker's", "use 'Bayesian', 'Random' or 'Grid'")
    if tuner.strategy_config is not None:
        raise _refuse("strategy_config", tuner.strategy_config, "the Hyperband settings are SageMaker's",
                      "drop strategy_config")
    if tuner.max_runtime_in_seconds is not None:
        raise _refuse("max_runtime_in_seconds", tuner.max_runtime_in_seconds, "a runtime limit is not kept",
                      "drop it (max_jobs bounds a local tuning job) or run on SageMaker")
    for name, value in tuner._hyperparameter_ranges.items():
        if getattr(value, "scaling_type", None) == "ReverseLogarithmic":
            raise _refuse(f"hyperparameter_ranges[{name!r}].scaling_type", "ReverseLogarithmic",
                          "reverse-logarithmic scaling is SageMaker's", "use 'Linear' or 'Logarithmic'")
        if tuner.strategy == "Grid" and not isinstance(value, CategoricalParameter):
            raise _refuse(f"hyperparameter_ranges[{name!r}]", value, "a Grid search takes categorical ranges only "
                          "(as SageMaker's)", "use CategoricalParameter([...]) or strategy='Bayesian'/'Random'")
    cores = os.cpu_count() or 1
    if tuner.max_parallel_jobs > cores:
        raise _refuse("max_parallel_jobs", tuner.max_parallel_jobs, f"this machine has {cores} cores",
                      f"set max_parallel_jobs to at most {cores}")
    if tuner.strategy == "Grid":
        size = 1
        for value in tuner._hyperparameter_ranges.values():
            size *= len(value.values)
        return min(size, tuner.max_jobs) if tuner.max_jobs else size
    return tuner.max_jobs


def _distributions(tuner: Any) -> dict[str, Any]:
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    out: dict[str, Any] = {}
    for name, value in tuner._hyperparameter_ranges.items():
        if isinstance(value, CategoricalParameter):
            out[name] = CategoricalDistribution(value.values)
        elif isinstance(value, IntegerParameter):
            out[name] = IntDistribution(int(value.min_value), int(value.max_value),
                                        log=value.scaling_type == "Logarithmic")
        else:
            out[name] = FloatDistribution(float(value.min_value), float(value.max_value),
                                          log=value.scaling_type == "Logarithmic")
    return out


def _sampler(tuner: Any) -> Any:
    import optuna

    if tuner.strategy == "Random" or tuner.strategy == "Grid":  # Grid: its combinations are enqueued (_enqueue_grid)
        return optuna.samplers.RandomSampler(seed=tuner.random_seed)
    return optuna.samplers.TPESampler(seed=tuner.random_seed)


def _enqueue_grid(tuner: Any, study: Any) -> None:
    """Grid: every combination of the categorical values, in order, each trial given one (Optuna's GridSampler ends
    a study from inside optimize(), which the trials here do not run in)."""
    names = list(tuner._hyperparameter_ranges)
    for combination in itertools.product(*(tuner._hyperparameter_ranges[n].values for n in names)):
        study.enqueue_trial(dict(zip(names, combination)))


def metric_values(lines: list[str], regex: str) -> list[float]:
    """Every value the regex's first group captures, in log order (unparsable captures skipped, as SageMaker's)."""
    pattern = re.compile(regex)
    values = []
    for line in lines:
        for match in pattern.finditer(line):
            try:
                values.append(float(match.group(1)))
            except (IndexError, TypeError, ValueError):
                continue
    return values


class _Trial:
    def __init__(self, index: int, trial: Any, job: Any, params: dict[str, Any]) -> None:
        self.index, self.trial, self.job, self.params = index, trial, job, params
        self.reported = 0
        self.stopped_early = False
        self.started = datetime.now(timezone.utc)


class LocalTuningJob:
    """A local tuning job's handle: describe() as DescribeHyperParameterTuningJob, training_job_summaries() as
    ListTrainingJobsForHyperParameterTuningJob, wait()."""

    backend = "local"

    def __init__(self, tuner: Any, request: dict[str, Any]) -> None:
        self.tuner, self.request = tuner, request
        self.name = self.job_name = request["HyperParameterTuningJobName"]
        self.status = "InProgress"
        self.summaries: list[dict[str, Any]] = []
        self.created = datetime.now(timezone.utc)
        self.ended: datetime | None = None

    def best_summary(self) -> dict[str, Any] | None:
        scored = [s for s in self.summaries if s.get("FinalHyperParameterTuningJobObjectiveMetric")]
        if not scored:
            return None
        sign = 1 if self.tuner.objective_type == "Maximize" else -1
        return max(scored, key=lambda s: sign * s["FinalHyperParameterTuningJobObjectiveMetric"]["Value"])

    def describe(self) -> dict[str, Any]:
        statuses = [s["TrainingJobStatus"] for s in self.summaries]
        description = {**self.request, "HyperParameterTuningJobStatus": self.status, "CreationTime": self.created,
                       "TrainingJobStatusCounters": {
                           "Completed": statuses.count("Completed"), "InProgress": statuses.count("InProgress"),
                           "RetryableError": 0, "NonRetryableError": statuses.count("Failed"),
                           "Stopped": statuses.count("Stopped")},
                       "ObjectiveStatusCounters": {
                           "Succeeded": sum(1 for s in self.summaries if s.get("ObjectiveStatus") == "Succeeded"),
                           "Pending": 0,
                           "Failed": sum(1 for s in self.summaries if s.get("ObjectiveStatus") == "Failed")}}
        best = self.best_summary()
        if best is not None:
            description["BestTrainingJob"] = best
        if self.ended is not None:
            description["HyperParameterTuningEndTime"] = self.ended
        return description

    def training_job_summaries(self) -> list[dict[str, Any]]:
        return list(self.summaries)

    def wait(self, logs: bool = False) -> dict[str, Any]:
        return self.describe()  # its trials ran inside fit()

    def stop(self) -> None:
        raise SagelaunchError(f"stop_tuning_job(): the local tuning job {self.name} already ended (its trials run "
                              "inside fit())", field="latest_tuning_job", value=self.name,
                              allowed="a SageMaker tuning job", fix="nothing to stop")


def _trial_estimator(estimator: Any, params: dict[str, Any]) -> Any:
    trial = estimator.model_copy()
    trial._latest_training_job = None
    trial.user_hyperparameters = {**(estimator.user_hyperparameters or {}), **params}
    return trial


def _objective_regex(tuner: Any) -> str:
    definitions = tuner.metric_definitions or tuner.estimator.metric_definitions or []
    for definition in definitions:
        if definition["Name"] == tuner.objective_metric_name:
            return definition["Regex"]
    names = [d["Name"] for d in definitions]
    fix = (f"add {{'Name': {tuner.objective_metric_name!r}, 'Regex': '…([0-9.]+)'}} to metric_definitions "
           "(the tuner's or the estimator's)")
    raise SagelaunchError(f"objective_metric_name={tuner.objective_metric_name!r} is not among the metric "
                          f"definitions {names}; {fix}", field="objective_metric_name",
                          value=tuner.objective_metric_name, allowed=", ".join(names) or "a defined metric", fix=fix)


def _summary(tuning_name: str, run: _Trial, status: str, objective: float | None, tuner: Any) -> dict[str, Any]:
    description = run.job.describe()
    summary: dict[str, Any] = {
        "TrainingJobName": run.job.name, "TrainingJobArn": description.get("TrainingJobArn", ""),
        "TuningJobName": tuning_name, "CreationTime": run.started, "TrainingStartTime": run.started,
        "TrainingEndTime": datetime.now(timezone.utc), "TrainingJobStatus": status,
        "TunedHyperParameters": {k: str(v) for k, v in run.params.items()},
        "ObjectiveStatus": "Succeeded" if objective is not None else "Failed"}
    if objective is not None:
        summary["FinalHyperParameterTuningJobObjectiveMetric"] = {
            "Type": tuner.objective_type, "MetricName": tuner.objective_metric_name, "Value": objective}
    if description.get("FailureReason"):
        summary["FailureReason"] = description["FailureReason"]
    return summary


def _warm_start_trials(tuner: Any, study: Any, distributions: dict[str, Any]) -> None:
    """Parents' finished trials added to the study (IdenticalDataAndAlgorithm / TransferLearning: the values
    that fit this tuner's ranges)."""
    import optuna


    if tuner.warm_start_config is None:
        return
    for parent in sorted(tuner.warm_start_config.parents):
        job = local_tuning_job(parent)
        if job is None:
            raise _refuse("warm_start_config.parents", parent, "a parent must be a local tuning job of this session",
                          "warm-start from a tuning job fitted here, or run on SageMaker")
        for summary in job.summaries:
            metric = summary.get("FinalHyperParameterTuningJobObjectiveMetric")
            tuned = summary["TunedHyperParameters"]
            if metric is None or set(tuned) != set(distributions):
                continue
            params = {}
            for name, text in tuned.items():
                value = tuner._hyperparameter_ranges[name].cast_to_type(text)
                if not distributions[name]._contains(distributions[name].to_internal_repr(value)):
                    break
                params[name] = value
            else:
                study.add_trial(optuna.trial.create_trial(params=params, distributions=distributions,
                                                          value=metric["Value"]))


def run_local_tuning(tuner: Any, settings: Any, inputs: Any) -> LocalTuningJob:
    """Run every trial (at most max_parallel_jobs at once) and return the finished tuning job."""
    import optuna


    total = check_local_tuning(tuner)
    regex = _objective_regex(tuner)
    estimator = tuner.estimator
    estimator.check_files()
    job = LocalTuningJob(tuner, create_tuning_job_request(estimator.training_job_request(settings.job_name, inputs),
                                                          settings))
    register_local(job)
    distributions = _distributions(tuner)
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        pruner = optuna.pruners.MedianPruner(n_startup_trials=1) if tuner.early_stopping_type == "Auto" else \
            optuna.pruners.NopPruner()
        study = optuna.create_study(direction=tuner.objective_type.lower(), sampler=_sampler(tuner), pruner=pruner)
        _warm_start_trials(tuner, study, distributions)
        if tuner.strategy == "Grid":
            _enqueue_grid(tuner, study)
        running: list[_Trial] = []
        started = 0
        while started < total or running:
            while started < total and len(running) < tuner.max_parallel_jobs:
                started += 1
                trial = study.ask(distributions)
                name = f"{settings.job_name}-{started:03d}-{secrets.token_hex(4)}"
                params = dict(trial.params)
                runner = _trial_estimator(estimator, params)
                runner.fit(inputs, wait=False, logs=False, job_name=name)
                running.append(_Trial(started, trial, runner.latest_training_job, params))
            time.sleep(POLL_SECONDS)
            for run in list(running):
                if _advance(run, tuner, study, regex, job, total):
                    running.remove(run)
        job.status = "Completed"
    except BaseException:
        job.status = "Failed"
        raise
    finally:
        job.ended = datetime.now(timezone.utc)
        optuna.logging.set_verbosity(verbosity)
    return job


def _advance(run: _Trial, tuner: Any, study: Any, regex: str, job: LocalTuningJob, total: int) -> bool:
    """One look at a running trial: report its objective so far (early stopping), and when it has ended record it.
    True when it ended."""
    import optuna

    status = run.job.describe()["TrainingJobStatus"]
    values = metric_values(list(run.job.logs(follow=False)), regex)
    if tuner.early_stopping_type == "Auto" and status == "InProgress" and not run.stopped_early:
        for step in range(run.reported, len(values)):
            run.trial.report(values[step], step)
        run.reported = len(values)
        if values and run.trial.should_prune():
            run.stopped_early = True
            run.job.stop()
    if status not in ("Completed", "Failed", "Stopped"):
        return False
    objective = values[-1] if values else None
    if status == "Completed" and objective is not None:
        study.tell(run.trial, objective)
    elif run.stopped_early:
        study.tell(run.trial, state=optuna.trial.TrialState.PRUNED)
    else:
        study.tell(run.trial, state=optuna.trial.TrialState.FAIL)
    job.summaries.append(_summary(job.name, run, status, objective if status != "Failed" else None, tuner))
    best = job.best_summary()
    shown = f"{tuner.objective_metric_name}={objective}" if objective is not None else "no objective value"
    early = " (stopped early)" if run.stopped_early else ""
    best_text = (f"best so far: {best['TrainingJobName']} "
                 f"{best['FinalHyperParameterTuningJobObjectiveMetric']['Value']}") if best else "no best yet"
    print(f"[tuning {job.name}] trial {len(job.summaries)}/{total} {run.job.name} {status}{early}: {shown} "
          f"{run.params}; {best_text}", flush=True)
    return True
