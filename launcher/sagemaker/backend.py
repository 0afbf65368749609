"""Runs a TrainingJobSpec on SageMaker: upload the code, CreateTrainingJob, wait, stream logs, stop.

The AWS details live in launcher/sagemaker/* and launcher/common/aws/*; this module is the flow and the job handle.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from sagelaunch.jobspec.errors import SagelaunchTypeError
from sagelaunch.jobspec.names import check_name
from sagelaunch.jobspec.spec import replace
from sagelaunch.launcher.common.aws import s3
from sagelaunch.launcher.common.aws.clients import account_id, client, current_session, resolve_region, using_session
from sagelaunch.launcher.common.aws.console import make_console
from sagelaunch.launcher.common.aws.errors import AWSError, describe_exception, is_not_found, translate
from sagelaunch.launcher.common.jobs import JobFailedError, TrainingJob, wants_logs
from sagelaunch.launcher.common.request import code_uri, compile_create_training_job_request
from sagelaunch.launcher.sagemaker.logs import JobLogTail
from sagelaunch.launcher.sagemaker.training import (
    check_inputs,
    check_name_free,
    create_training_job,
    role_arn,
    upload_code,
)
from sagelaunch.launcher.sagemaker.watch import TERMINAL, poll_intervals, watch

if TYPE_CHECKING:
    from sagelaunch.jobspec.spec import TrainingJobSpec

# Stopped with one of these secondary statuses means the job was cut off, not stopped by you
CUT_OFF = {
    "MaxRuntimeExceeded": "it ran past max_run (StoppingCondition.MaxRuntimeInSeconds); raise max_run or checkpoint",
    "MaxWaitTimeExceeded": "spot capacity did not arrive within max_wait; raise max_wait or use on-demand instances",
}


def _in_own_session(method: Any) -> Any:
    """Run a job method with the boto3 Session the job was created under (a user's sagemaker_session)."""
    @functools.wraps(method)
    def run(self: "SageMakerTrainingJob", *args: Any, **kwargs: Any) -> Any:
        with using_session(self.boto_session):
            return method(self, *args, **kwargs)

    return run


class SageMakerTrainingJob(TrainingJob):
    backend = "sagemaker"

    def __init__(self, name: str, region: str | None = None, *, poll_interval: float | None = None,
                 max_poll_interval: float | None = None, sent_hyperparameters: dict[str, str] | None = None,
                 request: dict[str, Any] | None = None):
        super().__init__(name, sent_hyperparameters)
        self.boto_session = current_session()  # the user's sagemaker_session's, kept for every later call
        self.region = resolve_region(region)
        self.poll_interval, self.max_poll_interval = poll_intervals(poll_interval, max_poll_interval)
        self.request = request  # the CreateTrainingJob this handle's submit sent (None when attached)

    @classmethod
    def attach(cls, name: str, region: str | None = None, **kwargs: Any) -> "SageMakerTrainingJob":
        """A handle on an existing SageMaker job (it must exist in `region`)."""
        job = cls(name, region, **kwargs)
        job.describe()
        return job

    def rule_job_summary(self) -> list[dict[str, Any]]:
        """v2's: the job's Debugger and Profiler rule evaluation statuses (DescribeTrainingJob)."""
        description = self.describe()
        return [*(description.get("DebugRuleEvaluationStatuses") or []),
                *(description.get("ProfilerRuleEvaluationStatuses") or [])]

    def _client(self):
        return client("sagemaker", self.region)

    @_in_own_session
    def describe(self) -> dict[str, Any]:
        try:
            answer = self._client().describe_training_job(TrainingJobName=self.name)
        except Exception as exc:
            if is_not_found(exc):
                raise AWSError(f"describe training job {self.name}",
                               f"there is no training job named {self.name!r} in {self.region}",
                               "check the name with `sagelaunch jobs list`, or pass the region it ran in.",
                               "NotFound") from None
            clear = describe_exception(f"describe training job {self.name}", exc)
            if clear is None:
                raise
            raise clear from None
        answer.pop("ResponseMetadata", None)
        return answer

    def _tail(self):
        return JobLogTail(self.name, self.region)

    @_in_own_session
    def wait(self, logs: bool | str = True, stop_on_interrupt: bool = False) -> dict[str, Any]:
        console = make_console()
        tail = self._tail() if wants_logs(logs) else None
        try:
            desc = watch(self.name, self.describe, console, tail, self.poll_interval, self.max_poll_interval)
        except KeyboardInterrupt as interrupt:
            interrupt.training_job = self  # type: ignore[attr-defined]  # the caller keeps a handle
            if stop_on_interrupt:
                self.stop()
                console.print(f"Interrupted: stopping training job {self.name} (stop_on_interrupt=True).", markup=False)
            else:
                console.print(
                    f"Interrupted: training job {self.name} keeps running on SageMaker. Reattach with "
                    f"`sagelaunch jobs logs {self.name} --follow` (or launcher.backends.attach({self.name!r}).wait()); "
                    f"stop it with `sagelaunch jobs stop {self.name}`.", markup=False)
            raise
        try:
            return self._finish(desc, console, tail)
        except JobFailedError as failed:
            failed.training_job = self  # type: ignore[attr-defined]  # the caller keeps a handle
            raise

    def _finish(self, desc: dict[str, Any], console, tail) -> dict[str, Any]:
        state, secondary = desc["TrainingJobStatus"], desc.get("SecondaryStatus")
        if state == "Completed":
            console.print(f"Training job {self.name} Completed; model: {self.model_data_of(desc)}", markup=False)
            return desc
        if state == "Stopped" and secondary not in CUT_OFF:
            console.print(f"Training job {self.name} was Stopped ({secondary}).", markup=False)
            return desc
        if tail is None:
            tail = self._tail()
            try:
                tail.poll()
            except Exception:  # the reason below matters more than the log tail
                pass
        if state == "Stopped":  # cut off: MaxRuntimeExceeded / MaxWaitTimeExceeded
            detail = desc.get("FailureReason")
            raise JobFailedError(self.name, str(secondary), CUT_OFF.get(str(secondary), "") + (f" ({detail})" if detail else ""),
                                 list(tail.last_lines))
        raise JobFailedError(self.name, state, desc.get("FailureReason"), list(tail.last_lines))

    @staticmethod
    def model_data_of(desc: dict[str, Any]) -> str | None:
        return desc.get("ModelArtifacts", {}).get("S3ModelArtifacts")

    def logs(self, follow: bool = False) -> Iterator[str]:
        """The job's log lines, `[algo-N]`-prefixed; follow=True keeps tailing until the job ends."""

        tail, delay = self._tail(), self.poll_interval
        while True:
            done = not follow or self.status in TERMINAL
            with using_session(self.boto_session):
                lines = tail.poll()
            yield from lines
            if done:
                return
            delay = self.poll_interval if lines else min(delay * 1.5, self.max_poll_interval)
            time.sleep(delay)

    @_in_own_session
    def stop(self) -> None:
        with translate(f"stop training job {self.name}"):
            self._client().stop_training_job(TrainingJobName=self.name)

    def _tags(self) -> list[dict[str, str]]:
        arn = self.describe()["TrainingJobArn"]
        with translate(f"list the tags of training job {self.name}"):
            return list(self._client().list_tags(ResourceArn=arn).get("Tags") or ())

    def update(self, **params: Any) -> None:
        """UpdateTrainingJob for this job (ProfilerConfig, ProfilerRuleConfigurations, ResourceConfig…)."""
        with translate(f"update training job {self.name}"):
            self._client().update_training_job(TrainingJobName=self.name, **params)

    @property
    def profiler_output(self) -> str | None:
        return profiler_output_uri(self.describe())


def profiler_output_uri(description: dict[str, Any]) -> str | None:
    """Where SageMaker puts a job's profiler files: <S3OutputPath>/<job>/profiler-output/ (None without one)."""
    config = description.get("ProfilerConfig") or {}
    if not config.get("S3OutputPath") or config.get("DisableProfiler"):
        return None
    return f"{config['S3OutputPath'].rstrip('/')}/{description['TrainingJobName']}/profiler-output/"


def attach(name: str, region: str | None = None, **options: Any) -> SageMakerTrainingJob:
    """The backend interface's attach: SageMakerTrainingJob.attach (raises AWSError when SageMaker does not know it)."""
    return SageMakerTrainingJob.attach(name, region, **options)


def list_jobs(region: str | None = None, status: str | None = None, max_results: int = 100) -> list[dict[str, Any]]:
    """TrainingJobSummaries, newest first (ListTrainingJobs)."""
    kwargs: dict[str, Any] = {"SortBy": "CreationTime", "SortOrder": "Descending", "MaxResults": min(max_results, 100)}
    if status:
        kwargs["StatusEquals"] = status
    with translate("list training jobs"):
        summaries = client("sagemaker", region).list_training_jobs(**kwargs)["TrainingJobSummaries"]
    return summaries[:max_results]


KNOWN_OPTIONS = {"bucket", "poll_interval", "max_poll_interval"}


def prepared_request(spec: "TrainingJobSpec", console: Any, bucket: str | None = None,
                     training_job: bool = True) -> tuple[dict[str, Any], Any]:
    """The CreateTrainingJob request of a SageMaker job with its code uploaded (and the upload, for cleaning up):
    the role checked, the inputs checked, the default output bucket made. A tuning job's definition starts here."""
    role = role_arn(spec.role, spec.compute.instance_type, spec.region)
    check_inputs(spec)
    if training_job:  # a tuning job's name is not a training job's
        check_name_free(spec.job_name, spec.region)
    account = account_id(spec.region)
    if not spec.output.output_path:  # the SDK's default: s3://sagemaker-<region>-<account>/ (created when missing)
        spec = replace(spec, output_path=f"s3://{bucket or s3.default_bucket(spec.region)}/")
    # the same rule as the dry run (`validate --request`): bucket= option, else the output bucket
    target = code_uri(spec, account, bucket=bucket)
    code = upload_code(spec, target, console)
    return dict(compile_create_training_job_request(replace(spec, submit_directory=code.uri, role=role))), code


def submit(spec: "TrainingJobSpec", *, wait: bool = True, logs: bool = True, stop_on_interrupt: bool = False,
           **options: Any) -> SageMakerTrainingJob:
    """Upload the code, create the job and (wait=True) follow it to the end."""
    unknown = set(options) - KNOWN_OPTIONS
    if unknown:
        raise SagelaunchTypeError(f"unknown SageMaker option(s) {sorted(unknown)}; allowed: {sorted(KNOWN_OPTIONS)}",
                                  field="options", value=sorted(unknown), allowed=", ".join(sorted(KNOWN_OPTIONS)),
                                  fix="drop them or correct their names")
    check_name(spec.job_name)
    console = make_console()
    request, code = prepared_request(spec, console, options.get("bucket"))
    create_training_job(request, spec.region, code)
    console.print(f"Created training job {spec.job_name} in {spec.region}" + (f" (code: {code.uri})" if code.uri else ""),
                  markup=False)
    job = SageMakerTrainingJob(spec.job_name, spec.region, poll_interval=options.get("poll_interval"),
                               max_poll_interval=options.get("max_poll_interval"),
                               sent_hyperparameters=request.get("HyperParameters", {}), request=request)
    if wait:
        job.wait(logs=logs, stop_on_interrupt=stop_on_interrupt)
    return job
