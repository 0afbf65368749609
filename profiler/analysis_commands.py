"""What `sagelaunch profile analyze` and `profile diff` do, once their arguments are read (profiler/cli.py reads
them: without Typer for `analyze PATH [--json] [--top N]`, else through its Typer app). Loaded only when one of
them runs (the analysis brings numpy and msgspec)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

from sagelaunch.profiler.analysis import analyze
from sagelaunch.profiler.analysis.diff import diff
from sagelaunch.profiler.kineto_reader import ProfileLoadError
from sagelaunch.profiler.records import AnalysisResult, ProfileDiff, to_json
from sagelaunch.profiler.summary import print_diff, print_summary

R = TypeVar("R", AnalysisResult, ProfileDiff)


def run_analyze(path: str, as_json: bool, top: int, context: dict | None = None) -> int:
    """The command's body; returns the exit status (2: the path cannot be read as a profile)."""
    return _run(lambda: analyze(path, top_n=top, context=context), as_json, print_summary, (ProfileLoadError,))


def run_diff(a: str, b: str, as_json: bool, top: int) -> int:
    """`profile diff`'s body; returns the exit status (2: a path cannot be read as a profile)."""
    return _run(lambda: diff(a, b, top=top), as_json, print_diff, (ProfileLoadError, ValueError))


def _run(compute: Callable[[], R], as_json: bool, print_text: Callable[[R], None],
         unreadable: tuple[type[Exception], ...]) -> int:
    """The result printed as JSON (one object) or as text; a profile that cannot be read is a one-line error, exit 2."""
    try:
        result = compute()
    except unreadable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if as_json:
        sys.stdout.buffer.write(to_json(result) + b"\n")
        sys.stdout.flush()
        return 0
    print_text(result)
    return 0
