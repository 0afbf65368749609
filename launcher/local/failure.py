"""Why a local job failed: the script's own output/failure file, else its traceback's last lines, plus the exit code."""

from __future__ import annotations

import re
import signal
from collections.abc import Iterable
from pathlib import Path

MAX_REASON = 1024  # SageMaker truncates FailureReason too
_ROOT_RANK = re.compile(r"^\s*rank\s*:\s*(\d+)")
_ROOT_EXIT = re.compile(r"^\s*exitcode\s*:\s*(-?\d+)")


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def torchrun_root_cause(lines: Iterable[str]) -> tuple[int | None, int | None]:
    """(global rank, exit code) of the first failure from torchrun's ChildFailedError summary."""
    rank = code = None
    seen_root = False
    for line in lines:
        if "Root Cause" in line:
            seen_root, rank, code = True, None, None
        elif seen_root:
            if rank is None and (m := _ROOT_RANK.match(line)):
                rank = int(m[1])
            elif code is None and (m := _ROOT_EXIT.match(line)):
                code = int(m[1])
    return rank, code


def traceback_tail(lines: list[str], keep: int = 4) -> str:
    """The last lines of the last traceback (ending with the exception line), else the last lines."""
    start = max((i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")), default=None)
    # Python 3.11+ underlines the failing expression with ^ / ~ markers: noise in a one-line reason
    body = [line for line in (lines[start:] if start is not None else lines)
            if line.strip() and line.strip().strip("^~") != ""]
    return "\n".join(body[-keep:])


def failure_file_text(failure_files: Iterable[Path]) -> str | None:
    for path in failure_files:
        try:
            text = path.read_text(errors="replace").strip()
        except OSError:
            continue
        if text:
            return text
    return None


def failure_reason(*, host: str, rank: int | None, exit_code: int, stderr_tail: list[str],
                   failure_files: Iterable[Path]) -> str:
    """AlgorithmError: <what the script said>; who failed and how."""
    who = f"rank {rank} on {host}" if rank is not None else host
    detail = failure_file_text(failure_files) or traceback_tail(stderr_tail)
    reason = f"AlgorithmError: {who} {describe_exit(exit_code)}"
    if detail:
        reason += f": {detail}"
    return reason if len(reason) <= MAX_REASON else reason[: MAX_REASON - 3] + "..."
