"""SageMaker resource names (`<base>-YYYY-MM-DD-HH-MM-SS-mmm`, at most 63 valid characters) and role ARNs."""

from __future__ import annotations

import re
from datetime import datetime, timezone

from sagelaunch.jobspec.errors import SagelaunchError

MAX_NAME_LENGTH = 63
NAME_ALLOWED = f"letters, digits and hyphens (at most {MAX_NAME_LENGTH})"
# SageMaker's own pattern for TrainingJobName / ModelName / EndpointName
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
_ALPHABET = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9])*$")  # NAME_PATTERN without its length
_TIMESTAMP_LENGTH = len("-2026-01-01-00-00-00-000")


def timestamp(now: datetime | None = None) -> str:
    """UTC time as YYYY-MM-DD-HH-MM-SS-mmm (milliseconds keep names from one second apart)."""
    now = now or datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%d-%H-%M-%S-") + f"{now.microsecond // 1000:03d}"


def _cleaned(text: str) -> str:
    """`text` on SageMaker's name alphabet: each run of other characters becomes one hyphen."""
    return re.sub(r"-{2,}", "-", re.sub(r"[^a-zA-Z0-9-]+", "-", text).strip("-"))


def sanitize_base(base: str) -> str:
    """Map a free-form base name (an image or script name, say) onto SageMaker's name alphabet."""
    cleaned = _cleaned(base)
    if not cleaned:
        raise SagelaunchError(
            f"base_job_name={base!r} has no letter or digit; SageMaker names use [a-zA-Z0-9-]. "
            "Fix: pass base_job_name='my-training-job'.", field="base_job_name", value=base, allowed="[a-zA-Z0-9-]",
            fix="pass base_job_name='my-training-job'")
    return cleaned


def job_name(base: str, now: datetime | None = None) -> str:
    """A unique, valid job name: the sanitized base, cut so the timestamp always fits."""
    stem = sanitize_base(base)[: MAX_NAME_LENGTH - _TIMESTAMP_LENGTH].rstrip("-")
    name = f"{stem}{'-' + timestamp(now)}"
    assert NAME_PATTERN.match(name), name
    return name


def base_from_name(name: str) -> str:
    """The base of a generated name (the SageMaker SDK's base_from_name): `name` less its timestamp."""
    match = re.match(r"^(.+)-(\d{4}-\d{2}-\d{2}-\d{2}-\d{2}-\d{2}-\d{3}|\d{6}-\d{4})", name)
    return match.group(1) if match else name


def check_name(name: str, field: str = "job_name") -> str:
    """Reject a user-given name SageMaker would refuse, saying why."""
    if not isinstance(name, str):
        quoted = f"; quote it: {field}: '{name}'" if isinstance(name, (int, float)) and not isinstance(name, bool) else ""
        raise SagelaunchError(f"{field}={name!r} is not text ({type(name).__name__}); allowed: {NAME_ALLOWED}{quoted}",
                              field=field, value=name, allowed=NAME_ALLOWED, fix=quoted.strip("; ") or "pass text")
    if not _ALPHABET.match(name):
        cleaned = _cleaned(name)[:MAX_NAME_LENGTH].strip("-")
        fix = f"did you mean {cleaned!r}?" if cleaned else "e.g. 'my-job-1'"
        raise SagelaunchError(f"{field}={name!r} is not a valid SageMaker name: use letters, digits and hyphens, "
                              f"starting and ending with a letter or digit; {fix}", field=field, value=name,
                              allowed=NAME_ALLOWED, fix=fix)
    if not NAME_PATTERN.match(name):  # the right characters, too many of them
        fix = f"shorten it, e.g. {name[:MAX_NAME_LENGTH].rstrip('-')!r}"
        raise SagelaunchError(f"{field}={name!r} has {len(name)} characters; SageMaker allows at most "
                              f"{MAX_NAME_LENGTH}. Fix: {fix}.", field=field, value=name, allowed=NAME_ALLOWED, fix=fix)
    return name


def path_name(name: str, field: str) -> str:
    """The one check for every name that becomes a file or folder name (a job's folder, an endpoint's record and
    lock, a model's or a profile's folder): SageMaker's name alphabet, which has no '/', '.' or '..', so a name can
    never reach outside the folder that holds it (`sagelaunch endpoints stop ../../x` is refused here)."""
    return check_name(name, field)


def role_arn(role: str, account: str) -> str:
    """The execution role as an ARN: a bare role name is expanded in `account`, as the SageMaker SDK does."""
    return role if role.startswith("arn:") else f"arn:aws:iam::{account}:role/{role}"
