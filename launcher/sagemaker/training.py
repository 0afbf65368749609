"""Preparing a SageMaker training job: role, inputs, code upload, and the CreateTrainingJob call."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher.common.aws import s3
from sagelaunch.launcher.common.aws.clients import client
from sagelaunch.launcher.common.aws.errors import AWSError, describe_exception, error_code, is_not_found
from sagelaunch.launcher.common.sourcedir import pack_sourcedir
from sagelaunch.launcher.sagemaker.progress import UploadWatch

if TYPE_CHECKING:
    from sagelaunch.jobspec.spec import TrainingJobSpec


def role_arn(role: str | None, instance_type: str, region: str) -> str:
    """The execution role as an ARN; a bare role name is expanded with the caller's account."""
    if not role:
        fix = ("pass role='arn:aws:iam::<account>:role/<name>' (a role trusted by sagemaker.amazonaws.com), or use "
               "instance_type='local' to run here without AWS")
        raise SagelaunchError(
            f"role is required to run on SageMaker (instance_type={instance_type!r}): SageMaker assumes it "
            f"to read your data and write the model. Fix: {fix}.", field="role", value=role,
            allowed="an IAM role ARN or role name", fix=fix)
    if role.startswith("arn:"):
        return role  # already an ARN: no need to ask IAM
    return expand_role(role, region)


def expand_role(name: str, region: str) -> str:
    """A bare role name → its ARN through IAM GetRole, as the SDK v2's Session.expand_role does: the
    role's path (…:role/service-role/<name>) is kept, which prefixing the account would lose."""
    try:
        return client("iam", region).get_role(RoleName=name)["Role"]["Arn"]
    except Exception as exc:
        if error_code(exc) == "NoSuchEntity":
            raise AWSError(
                f"find the execution role {name!r} (iam:GetRole)", f"there is no IAM role named {name!r} in this account",
                "check the name in the IAM console, or pass the role's full ARN "
                "(role='arn:aws:iam::<account>:role/<path>/<name>').", "NoSuchEntity",
            ) from None
        clear = describe_exception(f"find the execution role {name!r} (iam:GetRole)", exc)
        if clear is None:
            raise
        raise clear from None


def check_inputs(spec: "TrainingJobSpec") -> None:
    """Every channel must point at existing S3 data: SageMaker would otherwise fail minutes later."""
    for channel in spec.inputs:
        if not channel.uri.startswith("s3://"):
            fix = (f"upload it (aws s3 cp --recursive {channel.uri} s3://<bucket>/<prefix>) and pass that URI, or use "
                   "instance_type='local' to read local data")
            raise SagelaunchError(
                f"inputs[{channel.name!r}]={channel.uri!r} is not in S3, and jobs on {spec.compute.instance_type} read "
                f"their data from S3. Fix: {fix}.", field=f"inputs[{channel.name!r}]", value=channel.uri,
                allowed="s3://<bucket>/<prefix>", fix=fix)
        if not s3.prefix_exists(channel.uri, spec.region):
            raise AWSError(
                f"start the job {spec.job_name}",
                f"input channel {channel.name!r} is missing: no object at or under {channel.uri}",
                "check the URI for typos and that the data is uploaded to that bucket "
                f"(aws s3 ls {channel.uri}).",
                "MissingInput",
            )


def check_name_free(name: str, region: str) -> None:
    """A taken name must fail before the upload, which would overwrite that job's code archive."""
    try:
        existing = client("sagemaker", region).describe_training_job(TrainingJobName=name)
    except Exception as exc:
        if is_not_found(exc):
            return  # no such job: the name is free
        clear = describe_exception(f"check the job name {name}", exc)
        if clear is None:
            raise
        raise clear from None
    raise AWSError(
        f"create training job {name}",
        f"a training job named {name!r} already exists in {region} (status {existing['TrainingJobStatus']})",
        "leave job_name unset to generate a unique name, or choose a new one.", "ResourceInUse",
    )


@dataclass
class UploadedCode:
    uri: str
    files: list[str]
    size: int
    uploaded: bool  # False when source_dir already was an s3:// archive


def upload_code(spec: "TrainingJobSpec", target: str, console=None) -> UploadedCode:
    """Pack source_dir (or the lone entry point) and upload it to `target` (launcher.common.request.code_uri),
    showing progress on `console`'s status line and warning when the endpoint stops answering."""
    if not spec.code.ships_code:  # v2's generic Estimator of an image that runs its own program
        return UploadedCode("", [], 0, uploaded=False)
    if spec.code.source_dir and spec.code.source_dir.startswith("s3://"):
        return UploadedCode(spec.code.source_dir, [], 0, uploaded=False)
    entry = spec.code.entry_point if spec.code.source_dir else (spec.code.entry_point_path or spec.code.entry_point)
    if spec.code.source_dir is None and not Path(entry).is_file():
        raise SagelaunchError(f"entry_point={entry!r} does not exist. Fix: pass the path of your training script.",
                              field="entry_point", value=entry, allowed="an existing file",
                              fix="pass the path of your training script")
    with tempfile.TemporaryDirectory(prefix="sagelaunch-") as tmp:
        archive = Path(tmp) / "sourcedir.tar.gz"
        files = pack_sourcedir(spec.code.source_dir, entry, archive, spec.code.ignore_patterns, spec.code.dependencies)
        if spec.code.source_dir is not None and spec.code.entry_point not in files:
            raise SagelaunchError(
                f"entry_point={spec.code.entry_point!r} is not among the files of source_dir={spec.code.source_dir!r} "
                f"(after ignore patterns): {files[:10]}. Fix: name a file relative to source_dir.",
                field="entry_point", value=spec.code.entry_point, allowed=f"a file of source_dir={spec.code.source_dir!r}",
                fix="name a file relative to source_dir")
        size = archive.stat().st_size
        if console is None:
            uri = s3.upload_file(archive, target, spec.region)
        else:
            label = f"upload of the code for {spec.job_name} to {target}"
            with console.status(label) as status, UploadWatch(console, status, label, size) as watch:
                uri = s3.upload_file(archive, target, spec.region, progress=watch)
    return UploadedCode(uri, files, size, uploaded=True)


def create_training_job(request: dict[str, Any], region: str, code: UploadedCode) -> str:
    """CreateTrainingJob; on a failure remove the uploaded code unless a job by that name may be using it.

    A rejection becomes an AWSError saying what happened to the uploaded code; anything else (Ctrl-C, a
    bug) is re-raised as is.
    """
    from botocore.exceptions import ClientError

    name = request["TrainingJobName"]
    try:
        return client("sagemaker", region).create_training_job(**request)["TrainingJobArn"]
    except BaseException as exc:
        # refused at the first attempt: no job was made; else (a retry, Ctrl-C, a name in use) ask SageMaker
        refused = isinstance(exc, ClientError) and not _retried(exc) and error_code(exc) != "ResourceInUse"
        existing = _ABSENT if refused else _lookup(name, region)
        if isinstance(existing, dict) and error_code(exc) == "ResourceInUse" and _retried(exc) \
                and _made_from(existing, request):
            return existing["TrainingJobArn"]  # an earlier attempt made it; its answer was lost on the way
        if existing is _UNKNOWN:
            note = f"the code stays at {code.uri} in case the job exists (`sagelaunch jobs describe {name}`)"
        elif isinstance(existing, dict) and _code_of(existing) == code.uri:
            note = f"the code at {code.uri} stays: the existing job {name} uses it"
        else:
            note = _remove_code(code, region)
        clear = describe_exception(f"create training job {name}", exc) if isinstance(exc, Exception) else None
        if clear is None:
            raise
        raise AWSError(clear.action, f"{clear.cause}; {note}", clear.fix, clear.code) from None


_ABSENT, _UNKNOWN = object(), object()  # _lookup's answers besides a description


def _lookup(name: str, region: str) -> Any:
    """The job's description; _ABSENT when SageMaker says there is none; _UNKNOWN when it cannot be told."""
    try:
        return client("sagemaker", region).describe_training_job(TrainingJobName=name)
    except Exception as err:
        return _ABSENT if is_not_found(err) else _UNKNOWN


def _retried(exc: BaseException) -> bool:
    """True when botocore sent the request more than once: an earlier attempt may have taken effect."""
    return bool((getattr(exc, "response", None) or {}).get("ResponseMetadata", {}).get("RetryAttempts"))


def _code_of(description: dict[str, Any]) -> str:
    return str((description.get("HyperParameters") or {}).get("sagemaker_submit_directory", "")).strip('"')


def _made_from(description: dict[str, Any], request: dict[str, Any]) -> bool:
    """The existing job is this request's: same code, hyperparameters, image, role, hosts and output."""
    def identity(d: dict[str, Any]) -> tuple:
        return (d.get("HyperParameters"), d.get("AlgorithmSpecification", {}).get("TrainingImage"), d.get("RoleArn"),
                d.get("ResourceConfig", {}).get("InstanceType"), d.get("ResourceConfig", {}).get("InstanceCount"),
                d.get("OutputDataConfig", {}).get("S3OutputPath"))

    return identity(description) == identity(request)


def _remove_code(code: UploadedCode, region: str) -> str:
    """Delete the archive this submission uploaded; say what happened to it."""
    if not code.uploaded:
        return f"the code stays at {code.uri}"
    try:
        removed = s3.delete_object(code.uri, region)
    except Exception:  # the original failure matters more than the cleanup's
        removed = False
    return (f"the code uploaded for it ({len(code.files)} files, {code.size} bytes at {code.uri}) "
            + ("was removed again" if removed else "could not be removed: delete it by hand"))
