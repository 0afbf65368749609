"""The `sagelaunch` command (also `python -m sagelaunch`). The commands are in cli_commands.py, each imported when
it runs. The application layer: the only package that may import every other one."""

from __future__ import annotations

import sys
import warnings
from typing import Any

from sagelaunch.profiler.cli import fast_analyze


def _app() -> Any:
    """The Typer application; imported on first use, so that `sagelaunch profile analyze PATH --json`
    (fast_analyze) runs without importing Typer (~0.1 s)."""
    from sagelaunch.cli_commands import app  # lazy: `profile analyze PATH --json` runs without Typer (fast_analyze)

    return app


def __getattr__(name: str) -> Any:
    if name == "app":  # `from sagelaunch.cli import app`
        return _app()
    raise AttributeError(f"module 'sagelaunch.cli' has no attribute {name!r}")


def _one_line_warnings() -> None:
    """Warnings reach the terminal as `warning: <message>`, one line each, without Python's source-line echo."""
    warnings.showwarning = lambda message, category, *_args, **_kw: print(f"warning: {message}", file=sys.stderr)


def main() -> None:
    _one_line_warnings()
    fast_analyze(sys.argv[1:])  # `profile analyze PATH --json` without Typer's parsing; exits when it ran
    _app()()


if __name__ == "__main__":
    main()
