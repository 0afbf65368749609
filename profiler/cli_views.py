"""`sagelaunch profile report|export|timeline`: the dashboard report, the Perfetto export and the offline
timeline.

Registered on part 1's `profile` Typer app by profiler/cli.py. The app is built for every `sagelaunch` command
and its --help, so what the commands do (profiler/view_commands.py) is imported when one of them runs.
(`profile ui`, the profile browser, needs job sources only the application has: sagelaunch/cli_profile.py.)
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import typer

PATH_HELP = "A trace (.json/.json.gz), a folder of ranks, or a job's profiler output folder."


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)
    app.command("export")(export_cmd)
    app.command("timeline")(timeline_cmd)


def fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2) from None


def _views() -> ModuleType:
    """profiler/view_commands.py: the report, timeline and export writers."""
    from sagelaunch.profiler import view_commands  # lazy: the app is built for every sagelaunch command; the report and timeline (numpy, the analysis) load when their command runs

    return view_commands


def _build(what: str, build):
    """Run build() under a spinner that says `what`; a profile that cannot be read is a one-line error."""
    from rich.console import Console

    console = Console(stderr=True)
    try:
        with console.status(what):
            return console, build()
    except ValueError as exc:
        fail(exc)


def report_cmd(
    path: str = typer.Argument(..., help=PATH_HELP),
    out: Path = typer.Option(Path("report.html"), "-o", "--out", help="The HTML file to write."),
    title: str = typer.Option(None, "--title", help="Title shown in the report (default: the path)."),
) -> None:
    """Write the dashboard, with the findings, and the timeline (two tabs) as one self-contained HTML file that opens
    offline."""
    console, written = _build(f"building the report of {path}", lambda: _views().write_report(path, out, title=title))
    console.print(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB)")


def export_cmd(
    path: str = typer.Argument(..., help=PATH_HELP),
    perfetto: Path = typer.Option(..., "--perfetto", help="Write a Chrome/Perfetto trace (JSON) here, for ui.perfetto.dev."),
) -> None:
    """Export the timeline (host -> device tracks, launch arrows, counters) as a Perfetto/Chrome trace."""
    console, (model, written) = _build(f"exporting {path}", lambda: _views().export_perfetto(path, perfetto))
    console.print(f"wrote {written}: {len(model)} events on {len(model.tracks)} tracks; open it in ui.perfetto.dev")


def timeline_cmd(
    path: str = typer.Argument(..., help=PATH_HELP),
    out: Path = typer.Option(Path("timeline.html"), "-o", "--out", help="The HTML file to write."),
    title: str = typer.Option(None, "--title", help="Title shown on the page (default: the path)."),
) -> None:
    """Write the timeline (every rank; steps, search, launch arrows) as one self-contained HTML file that opens offline."""
    console, (written, events) = _build(f"building the timeline of {path}",
                                        lambda: _views().write_timeline(path, out, title=title))
    console.print(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB, {events:,} events)")

