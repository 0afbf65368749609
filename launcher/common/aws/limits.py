"""How long and how often an AWS call may try: the retry budget and the read timeout (environment-tunable)."""

from __future__ import annotations

import os
from sagelaunch.jobspec.errors import SagelaunchError

DEFAULT_MAX_ATTEMPTS = 5  # botocore's standard mode: 1 call + 4 retries with jittered backoff
MAX_ATTEMPTS_ENV = "SAGELAUNCH_AWS_MAX_ATTEMPTS"
# seconds a call may wait for the endpoint's next bytes before that attempt fails (and is retried);
# a frozen endpoint therefore ends a call after about attempts × this, not forever
DEFAULT_READ_TIMEOUT = 60
READ_TIMEOUT_ENV = "SAGELAUNCH_AWS_READ_TIMEOUT"
CONNECT_TIMEOUT = 10


def _positive_env(name: str, default: float, kind: type) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = 0
    if not value > 0:
        what = "a whole number >= 1" if kind is int else "a number of seconds > 0"
        raise SagelaunchError(f"{name}={raw!r} must be {what}, e.g. {default}.", field=name, value=raw, allowed=what,
                              fix=f"set it to e.g. {default}, or unset it")
    return value


def max_attempts() -> int:
    return int(_positive_env(MAX_ATTEMPTS_ENV, DEFAULT_MAX_ATTEMPTS, int))


def read_timeout() -> float:
    return _positive_env(READ_TIMEOUT_ENV, DEFAULT_READ_TIMEOUT, float)
