"""What `sagelaunch profile analyze` and `profile diff` do, once their arguments are read (profiler/cli.py reads
them: without Typer for `analyze PATH [--json] [--top N]`, else through its Typer app). Loaded only when one of
them runs (the analysis brings numpy and msgspec)."""

from __future__ import annotations

import sys

from sagelaunch.profiler.analysis import analyze
from sagelaunch.profiler.analysis.diff import diff
from sagelaunch.profiler.kineto_reader import ProfileLoadError
from sagelaunch.profiler.records import to_json
from sagelaunch.profiler.summary import print_diff, print_summary


def run_analyze(path: str, as_json: bool, top: int, context: dict | None = None) -> int:
    """The command's body; returns the exit status (2: the path cannot be read as a profile)."""
    try:
        result = analyze(path, top_n=top, context=context)
    except ProfileLoadError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if as_json:
        sys.stdout.buffer.write(to_json(result) + b"\n")
        sys.stdout.flush()
        return 0
    print_summary(result)
    return 0


def run_diff(a: str, b: str, as_json: bool, top: int) -> int:
    """`profile diff`'s body; returns the exit status (2: a path cannot be read as a profile)."""
    try:
        result = diff(a, b, top=top)
    except (ProfileLoadError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if as_json:
        sys.stdout.buffer.write(to_json(result) + b"\n")
        sys.stdout.flush()
        return 0
    print_diff(result)
    return 0
