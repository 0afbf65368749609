"""What every command prints failures and tables with: a console, one clear line per problem (exit 1, never a
traceback), and pydantic's errors as `field: message (value=…)` lines."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import typer
from pydantic import ValidationError

from sagelaunch.jobspec.errors import SagelaunchException, masked, shown

# pydantic errors whose message already names the value (ours), or that have no single value
VALUE_IN_MESSAGE = {"value_error", "missing", "assertion_error"}


def console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def error_lines(err: Exception) -> list[str]:
    """One line per problem: `field: message (value=…)` (pydantic errors carry their field in loc)."""
    if not isinstance(err, ValidationError):
        return [str(err)]
    lines = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"])
        value = f" (value={shown(masked(tuple(e['loc']), e['input']))})" if e["type"] not in VALUE_IN_MESSAGE and loc else ""
        for msg in e["msg"].removeprefix("Value error, ").splitlines():  # cross-field checks: one per line
            line = f"{loc}: {msg}" if loc and not msg.startswith(loc.split(".")[0]) else msg
            lines.append(line + value)
    return lines


@contextlib.contextmanager
def clear_errors() -> Iterator[None]:
    """Known failures → one red line and exit code 1."""
    try:
        yield
    except (SagelaunchException, ValueError, KeyError, FileNotFoundError) as exc:
        from rich.text import Text

        lines = [str(exc.args[0])] if isinstance(exc, KeyError) and exc.args else error_lines(exc)
        err = console(stderr=True)
        for line in lines:
            err.print(Text("error: ", style="bold red") + Text(line))
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
