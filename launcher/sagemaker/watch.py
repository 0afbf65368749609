"""Waiting for a training job: DescribeTrainingJob with backoff, a live status line, streamed logs.

The poll interval starts at `interval`, grows ×1.5 up to `max_interval` while nothing changes and
drops back to `interval` on any change; tests set it to milliseconds with SAGELAUNCH_POLL_INTERVAL.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sagelaunch.jobspec.contract import TERMINAL_STATUSES as TERMINAL
from sagelaunch.launcher.common.aws.errors import THROTTLING_CODES, AWSError
from sagelaunch.launcher.sagemaker.logs import JobLogTail
from sagelaunch.jobspec.errors import SagelaunchError

# a poll that still fails after botocore's retries is skipped this many times in a row before giving up:
# a wait lasts hours, and one bad minute of the API must not end it
TOLERATED_FAILED_POLLS = 3
TRANSIENT_CODES = THROTTLING_CODES | {"ConnectionError", "ReadTimeout", "InternalFailure", "InternalServerError", "ServiceUnavailable"}
DEFAULT_INTERVAL = 5.0
DEFAULT_MAX_INTERVAL = 30.0
INTERVAL_ENV = "SAGELAUNCH_POLL_INTERVAL"


def poll_intervals(interval: float | None = None, max_interval: float | None = None) -> tuple[float, float]:
    if interval is None:
        interval = float(os.environ.get(INTERVAL_ENV, DEFAULT_INTERVAL))
    if interval < 0:
        raise SagelaunchError(f"poll_interval={interval} must be >= 0 seconds, e.g. {DEFAULT_INTERVAL}.",
                              field="poll_interval", value=interval, allowed=">= 0 seconds",
                              fix=f"pass e.g. {DEFAULT_INTERVAL}")
    if max_interval is None:
        max_interval = max(interval, DEFAULT_MAX_INTERVAL if interval >= 1 else interval * 4)
    return interval, max(interval, max_interval)


def poll_until(describe: Callable[[], dict[str, Any]], status_key: str, terminal: tuple[str, ...]) -> dict[str, Any]:
    """describe() until its `status_key` is terminal, the poll interval growing as the training wait's does (batch
    transform and tuning jobs, which have no log stream of their own to follow)."""
    delay, longest = poll_intervals()
    while True:
        description = describe()
        if description[status_key] in terminal:
            return description
        time.sleep(delay)
        delay = min(longest, delay * 1.5)


def _transition_line(t: dict[str, Any]) -> str:
    start = t.get("StartTime")
    when = start.strftime("%Y-%m-%d %H:%M:%S") if isinstance(start, datetime) else str(start or "")
    message = t.get("StatusMessage") or ""
    return f"{when} {t.get('Status')}" + (f" - {message}" if message else "")


def watch(
    name: str,
    describe: Callable[[], dict[str, Any]],
    console,
    tail: JobLogTail | None = None,
    interval: float = DEFAULT_INTERVAL,
    max_interval: float = DEFAULT_MAX_INTERVAL,
) -> dict[str, Any]:
    """Poll until the job reaches a terminal status; print transitions and log lines; return describe()."""
    shown: list[tuple[Any, Any]] = []
    delay, failed_polls = interval, 0
    with console.status(f"{name}: waiting for status…") as status_line:
        while True:
            try:
                desc = describe()
                failed_polls = 0
            except AWSError as error:
                failed_polls += 1
                if error.code not in TRANSIENT_CODES or failed_polls > TOLERATED_FAILED_POLLS:
                    raise
                console.print(f"warning: {error.cause}; polling {name} again", markup=False)
                delay = min(max(delay, interval) * 2, max_interval)
                time.sleep(delay)
                continue
            changed = False
            transitions = [(t.get("Status"), t.get("StatusMessage")) for t in desc.get("SecondaryStatusTransitions", [])]
            for i, key in enumerate(transitions):
                if i >= len(shown) or shown[i] != key:
                    console.print(_transition_line(desc["SecondaryStatusTransitions"][i]), markup=False)
                    changed = True
            shown = transitions
            if tail is not None:
                for line in tail.poll():
                    console.print(line, markup=False)
                    changed = True
            state, secondary = desc.get("TrainingJobStatus"), desc.get("SecondaryStatus")
            status_line.update(f"{name}: {state} / {secondary}")
            if state in TERMINAL:
                if tail is not None:  # events written just before the end
                    for line in tail.poll():
                        console.print(line, markup=False)
                return desc
            delay = interval if changed else min(delay * 1.5, max_interval)
            time.sleep(delay)
