"""Training job names: `<base>-YYYY-MM-DD-HH-MM-SS-mmm`, at most 63 characters, SageMaker's pattern."""

from __future__ import annotations

import re
from datetime import datetime, timezone

JOB_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")
MAX_LEN = 63
_TIMESTAMP_LEN = len("2024-01-01-00-00-00-000")


def timestamp(now: datetime | None = None) -> str:
    now = now or datetime.now(timezone.utc)
    return now.strftime("%Y-%m-%d-%H-%M-%S-") + f"{now.microsecond // 1000:03d}"


def sanitize_base(base: str) -> str:
    """Keep letters, digits and hyphens; no leading/trailing hyphen; room left for the timestamp."""
    cleaned = re.sub(r"[^a-zA-Z0-9-]+", "-", base).strip("-") or "job"
    return cleaned[: MAX_LEN - _TIMESTAMP_LEN - 1].rstrip("-")


def job_name_from_base(base: str, now: datetime | None = None) -> str:
    return f"{sanitize_base(base)}-{timestamp(now)}"


def check_job_name(name: str) -> str:
    if not isinstance(name, str) or len(name) > MAX_LEN or not JOB_NAME.match(name):
        fixed = job_name_from_base(name) if isinstance(name, str) and name else "my-job"
        raise ValueError(
            f"job_name={name!r} is not a valid training job name; allowed: 1-63 letters, digits and "
            f"hyphens, starting with a letter or digit; did you mean {fixed!r}?"
        )
    return name
