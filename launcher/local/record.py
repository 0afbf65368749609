"""A local job's registry record: its CreateTrainingJob request plus DescribeTrainingJob's status fields and "JobDir".

The request part is the compiled request as is (launcher.common.request: no second builder); the fields a local job adds
are declared in `LocalJobRecord`, which the registry checks on every write.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.contract import STATUSES
from sagelaunch.launcher.common.request import CreateTrainingJobRequest

Status = Literal[STATUSES]  # type: ignore[valid-type]


class LocalJobRecord(BaseModel):
    """DescribeTrainingJob's status fields of a local job; the request's own fields ride along (extra="allow")."""

    model_config = ConfigDict(extra="allow")

    TrainingJobName: str
    TrainingJobStatus: Status
    CreationTime: datetime
    JobDir: str  # the job folder on this machine (sagelaunch's own field)
    TrainingJobArn: str | None = None
    SecondaryStatus: str | None = None
    SecondaryStatusTransitions: list[dict[str, Any]] = []
    LastModifiedTime: datetime | None = None
    TrainingStartTime: datetime | None = None
    TrainingEndTime: datetime | None = None
    TrainingTimeInSeconds: int | None = None
    FailureReason: str | None = None
    ModelArtifacts: dict[str, Any] | None = None
    OutputArtifacts: dict[str, Any] | None = None
    ProfilerOutput: str | None = None  # where the profile was published


def check_record(record: dict[str, Any]) -> None:
    """Raise naming the field when `record` is not a local job's record (the registry's one gate)."""
    LocalJobRecord.model_validate(record)


def first_record(request: CreateTrainingJobRequest, region: str, job_dir: Path, created: datetime) -> dict[str, Any]:
    """The job's first record: the request it was compiled to, InProgress/Starting."""
    name = request["TrainingJobName"]
    return {
        **request,
        "TrainingJobArn": f"arn:aws:sagemaker:{region}:000000000000:training-job/{name}",
        "TrainingJobStatus": "InProgress",
        "SecondaryStatus": "Starting",
        "SecondaryStatusTransitions": [{"Status": "Starting", "StartTime": created,
                                        "StatusMessage": "Preparing the instances for training"}],
        "CreationTime": created,
        "LastModifiedTime": created,
        "JobDir": str(job_dir),
    }
