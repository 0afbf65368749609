"""A hyperparameter tuning job on SageMaker (CreateHyperParameterTuningJob, Describe…, ListTrainingJobsFor…, Stop…),
its v2-shaped wait, and the analytics frame both backends' results make."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchRuntimeError
from sagelaunch.launcher.common.aws.clients import client, using_session
from sagelaunch.launcher.common.aws.errors import translate
from sagelaunch.launcher.sagemaker.watch import poll_until

TERMINAL = ("Completed", "Failed", "Stopped")
_LOCAL_JOBS: dict[str, Any] = {}  # this process's local tuning jobs, by name (estimators' local tuner registers them)


class TuningJobFailedError(SagelaunchRuntimeError):
    def __init__(self, name: str, status: str, reason: str | None) -> None:
        fix = "read its training jobs' failure reasons (tuner.analytics().dataframe(), DescribeTrainingJob)"
        super().__init__(f"tuning job {name} ended {status}: {reason or 'no reason given'}. Fix: {fix}",
                         field="HyperParameterTuningJobStatus", value=status, allowed="Completed", fix=fix)


class SageMakerTuningJob:
    backend = "sagemaker"

    def __init__(self, name: str, region: str, boto_session: Any = None, request: dict[str, Any] | None = None):
        self.name = self.job_name = name
        self.region, self.request, self._boto_session = region, request, boto_session

    def _call(self, operation: str, **params: Any) -> Any:
        scope = using_session(self._boto_session) if self._boto_session is not None else nullcontext()
        with scope, translate(f"{operation} {self.name}"):
            return getattr(client("sagemaker", self.region), operation)(**params)

    def describe(self) -> dict[str, Any]:
        return self._call("describe_hyper_parameter_tuning_job", HyperParameterTuningJobName=self.name)

    def wait(self, logs: bool = False) -> dict[str, Any]:
        """DescribeHyperParameterTuningJob until it ends (v2's wait); Failed raises naming the reason."""
        description = poll_until(self.describe, "HyperParameterTuningJobStatus", TERMINAL)
        if description["HyperParameterTuningJobStatus"] == "Failed":
            raise TuningJobFailedError(self.name, "Failed", description.get("FailureReason"))
        return description

    def stop(self) -> None:
        self._call("stop_hyper_parameter_tuning_job", HyperParameterTuningJobName=self.name)

    def training_job_summaries(self) -> list[dict[str, Any]]:
        """Every training job of the tuning job (ListTrainingJobsForHyperParameterTuningJob, all pages)."""
        summaries: list[dict[str, Any]] = []
        params: dict[str, Any] = {"HyperParameterTuningJobName": self.name, "MaxResults": 100}
        while True:
            page = self._call("list_training_jobs_for_hyper_parameter_tuning_job", **params)
            summaries.extend(page["TrainingJobSummaries"])
            if not page.get("NextToken"):
                return summaries
            params["NextToken"] = page["NextToken"]


def start_tuning_job(request: dict[str, Any], region: str, boto_session: Any = None) -> SageMakerTuningJob:
    job = SageMakerTuningJob(request["HyperParameterTuningJobName"], region, boto_session, request)
    job._call("create_hyper_parameter_tuning_job", **request)
    return job


def register_local(job: Any) -> None:
    _LOCAL_JOBS[job.name] = job


def local_tuning_job(name: str) -> Any | None:
    """This process's local tuning job called `name`, None when there is none (warm starts read their parents)."""
    return _LOCAL_JOBS.get(name)


def find_tuning_job(name: str, region: str, boto_session: Any = None) -> Any:
    """The tuning job called `name`: a local one of this process first, else SageMaker's."""
    return _LOCAL_JOBS.get(name) or SageMakerTuningJob(name, region, boto_session)


def analytics_rows(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """v2's HyperparameterTuningJobAnalytics rows: the tuned values (as floats where they parse), the job's name,
    status, final objective value, start/end times and elapsed seconds."""
    rows = []
    for summary in summaries:
        row: dict[str, Any] = {}
        for key, value in summary["TunedHyperParameters"].items():
            try:
                row[key] = float(value)
            except (TypeError, ValueError):
                row[key] = value
        row["TrainingJobName"] = summary["TrainingJobName"]
        row["TrainingJobStatus"] = summary["TrainingJobStatus"]
        row["FinalObjectiveValue"] = (summary.get("FinalHyperParameterTuningJobObjectiveMetric") or {}).get("Value")
        start, end = summary.get("TrainingStartTime"), summary.get("TrainingEndTime")
        row["TrainingStartTime"], row["TrainingEndTime"] = start, end
        if start and end:
            row["TrainingElapsedTimeSeconds"] = (end - start).total_seconds()
        if "TrainingJobDefinitionName" in summary:
            row["TrainingJobDefinitionName"] = summary["TrainingJobDefinitionName"]
        rows.append(row)
    return rows
