"""TrainingJob: one handle for a job wherever it runs.

`describe()` returns a DescribeTrainingJob-shaped dict in both backends, so code and the
CLI treat local and SageMaker jobs the same. Finding a job by name is the backends' part
(`sagelaunch.launcher.backends.attach`); a name neither knows raises JobNotFoundError, defined here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Iterator

from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchRuntimeError
from sagelaunch.jobspec.suggest import did_you_mean

# `logs=` of wait() (and the estimators' fit()) as the SageMaker SDK v2 takes it: a bool or a v2 log type
LOG_CHOICES = {True: True, False: False, "All": True, "Training": True, "Rules": True, "None": False}


def wants_logs(logs: Any) -> bool:
    """`logs=` as v2 takes it (True/False, "All", "None", "Training", "Rules") → whether to stream logs."""
    try:
        return LOG_CHOICES[logs]
    except (KeyError, TypeError):
        raise SagelaunchError(f"logs={logs!r} is not a log choice; allowed: True, False, 'All', 'None', 'Training', "
                              "'Rules' (as the SageMaker SDK v2)", field="logs", value=logs,
                              allowed="True, False, 'All', 'None', 'Training', 'Rules'",
                              fix="pass logs=True or logs='All'") from None


class TrainingJob(ABC):
    backend: str  # "local" | "sagemaker"

    def __init__(self, name: str, sent_hyperparameters: dict[str, str] | None = None):
        self.name = name
        self._sent_hyperparameters = sent_hyperparameters  # known when this handle created the job

    @property
    def job_name(self) -> str:
        """The job's name (the SageMaker SDK v2's `_TrainingJob.job_name`; `name` is the same)."""
        return self.name

    @property
    def hyperparameters(self) -> dict[str, str]:
        """The HyperParameters the job was created with, JSON-encoded (DescribeTrainingJob's, read once)."""
        if self._sent_hyperparameters is None:
            self._sent_hyperparameters = dict(self.describe().get("HyperParameters") or {})
        return dict(self._sent_hyperparameters)

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """DescribeTrainingJob-shaped: TrainingJobName, TrainingJobStatus, SecondaryStatus,
        SecondaryStatusTransitions, FailureReason, CreationTime, TrainingStartTime,
        TrainingEndTime, ModelArtifacts.S3ModelArtifacts, OutputDataConfig, ProfilerConfig…"""

    @abstractmethod
    def wait(self, logs: bool | str = True) -> dict[str, Any]:
        """Block until a terminal status; raise JobFailedError on Failed; return describe()."""

    @abstractmethod
    def logs(self, follow: bool = False) -> Iterator[str]:
        """Log lines, each prefixed by host (and rank locally); follow=True tails until the end."""

    @abstractmethod
    def stop(self) -> None:
        """Ask the job to stop; the status becomes Stopping then Stopped."""

    @property
    def status(self) -> str:
        return self.describe()["TrainingJobStatus"]

    def tags(self) -> list[dict[str, str]]:
        """The job's tags as ListTags gives them ([{"Key": …, "Value": …}]); AWS's own aws:* tags left out."""
        return [t for t in self._tags() if not t["Key"].lower().startswith("aws:")]

    def _tags(self) -> list[dict[str, str]]:
        return list(self.describe().get("Tags") or ())

    @property
    def model_data(self) -> str | None:
        return self.describe().get("ModelArtifacts", {}).get("S3ModelArtifacts")

    @property
    @abstractmethod
    def profiler_output(self) -> str | None:
        """Where the profiler's files are: s3://… prefix or a local folder."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class JobFailedError(SagelaunchRuntimeError):
    """A job ended Failed, Stopped or MaxRuntimeExceeded; carries the reason and the last log lines."""

    def __init__(self, name: str, status: str, reason: str | None, last_logs: list[str] | None = None):
        self.job_name, self.status, self.reason, self.last_logs = name, status, reason, last_logs or []
        tail = "\n".join(self.last_logs[-20:])
        msg = f"training job {name} ended {status}: {reason or 'no reason given'}"
        super().__init__(msg + (f"\n--- last log lines ---\n{tail}" if tail else ""))


class JobNotFoundError(SagelaunchError):
    """No local job has this name and SageMaker could not be asked, or does not know it either."""

    @classmethod
    def for_name(cls, name: str, sagemaker_error: Exception) -> "JobNotFoundError":
        from sagelaunch.launcher.local import registry  # lazy: sqlite3 and the record model, only for a missing job

        local_names = [r["TrainingJobName"] for r in registry.list_jobs()]
        local = f"no local job named {name!r}" + (
            did_you_mean(name, local_names, n=3) or " (`sagelaunch jobs list` shows them)")
        code = getattr(sagemaker_error, "code", None)
        if code == "NotFound":  # SageMaker was asked and does not know it either
            return cls(f"{local}, and {getattr(sagemaker_error, 'cause', sagemaker_error)}\n"
                       f"Fix: {getattr(sagemaker_error, 'fix', 'check the name with `sagelaunch jobs list`.')}")
        no_region = isinstance(sagemaker_error, SagelaunchError) and sagemaker_error.field == "region"
        if code in ("NoRegion", "NoCredentials") or no_region:  # SageMaker could not be asked at all
            why = getattr(sagemaker_error, "cause", None) or "no AWS region is configured"
            return cls(f"{local}; SageMaker jobs were not searched ({why})\n"
                       "Fix: check the name, or, for a SageMaker job, pass --region (region= in Python) or set "
                       "AWS_REGION, with AWS credentials configured")
        return cls(f"{local}; SageMaker could not be asked: {sagemaker_error}")


def print_logs(job: TrainingJob) -> None:
    """v2's `logs()`: print the job's logs until it ends; a Failed job then raises, as v2's does."""
    for line in job.logs(follow=True):
        print(line, flush=True)
    description = job.describe()
    if description["TrainingJobStatus"] == "Failed":
        raise JobFailedError(job.name, "Failed", description.get("FailureReason"))
