"""botocore errors → one clear message naming the cause and the fix (never a raw traceback)."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from sagelaunch.jobspec.errors import SagelaunchRuntimeError
from sagelaunch.launcher.common.aws.limits import MAX_ATTEMPTS_ENV, READ_TIMEOUT_ENV, max_attempts, read_timeout

THROTTLING_CODES = {
    "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
    "TooManyRequestsException", "ProvisionedThroughputExceededException", "RequestLimitExceeded",
    "SlowDown", "RequestThrottled", "BandwidthLimitExceeded", "PriorRequestNotComplete",
    "EC2ThrottledException",
}
ACCESS_DENIED_CODES = {"AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "Forbidden", "403"}
CREDENTIAL_CODES = {
    "ExpiredToken", "ExpiredTokenException", "InvalidClientTokenId", "UnrecognizedClientException",
    "InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken",
}


class AWSError(SagelaunchRuntimeError):
    """An AWS call failed; `cause` says what happened, `fix` what to do about it."""

    def __init__(self, action: str, cause: str, fix: str, code: str | None = None):
        self.action, self.cause, self.code = action, cause, code
        super().__init__(f"could not {action}: {cause}\nFix: {fix}", fix=fix)


def _fix_for(code: str, message: str, status: int | None, attempts: int | None) -> tuple[str, str]:
    """(cause, fix) for one AWS error code."""
    lower = message.lower()
    if code in THROTTLING_CODES or (status is not None and status >= 500):
        tries = f" after {attempts + 1} attempts" if attempts is not None else ""
        return (
            f"AWS kept answering {code or status}{tries} ({message or 'no message'})",
            "try again in a minute; if it persists, raise the retry budget with "
            "SAGELAUNCH_AWS_MAX_ATTEMPTS=10 or check https://health.aws.amazon.com.",
        )
    if code in ACCESS_DENIED_CODES:
        return (
            f"access denied ({message or code})",
            "grant the missing permission named above to the IAM user or role you are using "
            "(`aws sts get-caller-identity` shows which), or pick a profile that has it with AWS_PROFILE.",
        )
    if code in CREDENTIAL_CODES:
        return (
            f"the AWS credentials were rejected ({code}: {message})",
            "refresh them (`aws sso login`, `aws configure`) or set AWS_PROFILE to a valid profile.",
        )
    if code == "ResourceLimitExceeded":
        return (
            f"an account quota was reached ({message})",
            "request a higher quota for this instance type under 'Amazon SageMaker' in the Service Quotas "
            "console, choose another instance type or count, or wait for running jobs to finish.",
        )
    if "role" in lower and ("assume" in lower or "not authorized" in lower or "iam" in lower):
        return (
            f"SageMaker cannot use the execution role ({message})",
            "pass role='arn:aws:iam::<account>:role/<name>' for a role that exists and whose trust policy "
            "allows sagemaker.amazonaws.com (the SageMakerExecutionRole the console creates works).",
        )
    if code in ("NoSuchBucket", "NoSuchKey", "404", "NotFound") or "does not exist" in lower or "not found" in lower:
        return (
            f"not found ({message or code})",
            "check the S3 URI or name for typos and that it lives in the job's region.",
        )
    if code in ("ValidationException", "ValidationError", "InvalidParameterValue", "InvalidRequest"):
        return (
            f"the request was rejected as invalid ({message})",
            "correct the field named in the message; `sagelaunch validate JOB.yaml` checks a job offline.",
        )
    if code == "ResourceInUse":
        return (f"the name is already in use ({message})", "use a new job name, or leave job_name unset.")
    return (f"{code or status}: {message}", "see the message above; rerun with the AWS CLI to reproduce it.")


def describe_exception(action: str, exc: BaseException) -> AWSError | None:
    """The AWSError for a botocore/boto3 exception, or None when it is not one."""
    from botocore import exceptions as bex

    if isinstance(exc, AWSError):
        return exc
    if isinstance(exc, bex.ClientError):
        error = exc.response.get("Error", {})
        meta = exc.response.get("ResponseMetadata", {})
        code = str(error.get("Code") or "")
        cause, fix = _fix_for(code, str(error.get("Message") or ""), meta.get("HTTPStatusCode"),
                              meta.get("RetryAttempts"))
        return AWSError(action, cause, fix, code or None)
    if isinstance(exc, (bex.NoCredentialsError, bex.PartialCredentialsError)):
        return AWSError(
            action, "no AWS credentials were found",
            "run `aws configure` (or `aws sso login`), set AWS_PROFILE, or export AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY; for runs without AWS use instance_type='local'.",
            "NoCredentials",
        )
    if isinstance(exc, bex.NoRegionError):
        return AWSError(action, "no AWS region is configured", "pass region= or set AWS_REGION.", "NoRegion")
    if isinstance(exc, bex.ReadTimeoutError):
        return AWSError(
            action, f"the AWS endpoint stopped answering: no reply within the {read_timeout():g} s read timeout, "
            f"{max_attempts()} attempts ({exc})",
            f"check your network / proxy and AWS_ENDPOINT_URL, then try again; {READ_TIMEOUT_ENV} and "
            f"{MAX_ATTEMPTS_ENV} raise the limits.",
            "ReadTimeout",
        )
    if isinstance(exc, (bex.EndpointConnectionError, bex.ConnectionClosedError, bex.ConnectTimeoutError)):
        return AWSError(
            action, f"the AWS endpoint could not be reached after the retry budget ({exc})",
            "check your network / proxy and AWS_ENDPOINT_URL, then try again; "
            "SAGELAUNCH_AWS_MAX_ATTEMPTS raises the retry budget.",
            "ConnectionError",
        )
    if isinstance(exc, bex.ParamValidationError):
        return AWSError(action, f"the request does not match the AWS API ({exc})",
                        "this is a sagelaunch bug: please report it with the job spec.", "ParamValidation")
    if isinstance(exc, bex.BotoCoreError):
        return AWSError(action, str(exc), "see the message; check credentials, region and network.", None)
    try:  # s3transfer wraps upload failures
        from boto3.exceptions import S3UploadFailedError
    except ImportError:  # pragma: no cover
        S3UploadFailedError = ()
    if isinstance(exc, S3UploadFailedError):
        return AWSError(action, f"the upload failed ({exc})",
                        "check the bucket's permissions and your network, then try again.", "S3UploadFailed")
    return None


@contextlib.contextmanager
def translate(action: str) -> Iterator[None]:
    """Turn any botocore error raised inside into one AWSError saying what failed and the fix."""
    try:
        yield
    except Exception as exc:
        clear = describe_exception(action, exc)
        if clear is None or clear is exc:
            raise
        clear.original = exc  # type: ignore[attr-defined]
        raise clear from None


_NOT_FOUND = re.compile(r"not found|could not find|does not exist", re.IGNORECASE)
NOT_FOUND_CODES = {"ValidationException", "ResourceNotFound", "ResourceNotFoundException"}


def is_not_found(error: BaseException) -> bool:
    """True when AWS says the named resource does not exist.

    SageMaker has no dedicated code for a missing training job: it answers ValidationException
    "Requested resource not found." (moto words it "Could not find training job …"); any other
    ValidationException (a malformed name, say) is a real error.
    """
    if isinstance(error, AWSError):
        code, message = error.code, error.cause
    else:
        from botocore.exceptions import ClientError

        if not isinstance(error, ClientError):
            return False
        details = error.response.get("Error", {})
        code, message = details.get("Code"), str(details.get("Message") or "")
    return code in NOT_FOUND_CODES and bool(_NOT_FOUND.search(message or ""))


def error_code(exc: BaseException) -> str | None:
    from botocore.exceptions import ClientError

    if isinstance(exc, ClientError):
        return exc.response.get("Error", {}).get("Code")
    return getattr(exc, "code", None)
