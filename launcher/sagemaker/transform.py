"""A SageMaker transform job: CreateTransformJob, DescribeTransformJob and v2's wait loop (until it ends)."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchRuntimeError
from sagelaunch.launcher.common.aws.clients import client, using_session
from sagelaunch.launcher.common.aws.errors import translate
from sagelaunch.launcher.sagemaker.endpoint import create_model_request
from sagelaunch.launcher.sagemaker.watch import poll_until

TERMINAL = ("Completed", "Failed", "Stopped")


class TransformJobFailedError(SagelaunchRuntimeError):
    """A transform job ended Failed or Stopped; names the job and SageMaker's FailureReason."""

    def __init__(self, name: str, status: str, reason: str | None) -> None:
        fix = "read the job's logs (CloudWatch /aws/sagemaker/TransformJobs) and fix the model or the input"
        super().__init__(f"transform job {name} ended {status}: {reason or 'no reason given'}. Fix: {fix}",
                         field="TransformJobStatus", value=status, allowed="Completed", fix=fix)
        self.job_name, self.status, self.reason = name, status, reason


class SageMakerTransformJob:
    """A transform job on SageMaker (v2's _TransformJob): describe() and wait()."""

    backend = "sagemaker"

    def __init__(self, name: str, region: str, boto_session: Any = None, request: dict[str, Any] | None = None):
        self.name = self.job_name = name
        self.region = region
        self.request = request
        self._boto_session = boto_session

    def _scope(self) -> Any:
        return using_session(self._boto_session) if self._boto_session is not None else nullcontext()

    def describe(self) -> dict[str, Any]:
        with self._scope(), translate(f"describe transform job {self.name}"):
            return client("sagemaker", self.region).describe_transform_job(TransformJobName=self.name)

    def wait(self, logs: bool = False) -> dict[str, Any]:
        """DescribeTransformJob until a terminal status (polling as the training wait does); Failed/Stopped raise."""
        description = poll_until(self.describe, "TransformJobStatus", TERMINAL)
        if description["TransformJobStatus"] != "Completed":
            raise TransformJobFailedError(self.name, description["TransformJobStatus"], description.get("FailureReason"))
        return description

    def stop(self) -> None:
        with self._scope(), translate(f"stop transform job {self.name}"):
            client("sagemaker", self.region).stop_transform_job(TransformJobName=self.name)


def start_transform_job(request: dict[str, Any], region: str, boto_session: Any = None) -> SageMakerTransformJob:
    """CreateTransformJob; the handle of the job it made."""
    job = SageMakerTransformJob(request["TransformJobName"], region, boto_session, request)
    with job._scope(), translate(f"create transform job {job.name}"):
        client("sagemaker", region).create_transform_job(**request)
    return job


def create_model(model_name: str, role_arn: str, container: dict[str, Any], region: str, *,
                 tags: list[dict[str, str]] | None = None, vpc_config: dict[str, Any] | None = None,
                 enable_network_isolation: bool = False, boto_session: Any = None) -> str:
    """CreateModel as v2's Model._create_sagemaker_model sends it (before a transform job): optional keys only when
    set."""
    request = create_model_request(model_name, role_arn, container, tags, vpc_config, enable_network_isolation)
    with using_session(boto_session) if boto_session is not None else nullcontext(), \
            translate(f"create model {model_name}"):
        client("sagemaker", region).create_model(**request)
    return model_name
