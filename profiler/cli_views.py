"""`sagelaunch profile report|export`: the dashboard report and the Perfetto export.

Registered on part 1's `profile` Typer app by profiler/cli.py; heavy imports stay inside the commands.
(`profile ui`, the profile browser, needs job sources only the application has: sagelaunch/cli_profile.py.)
"""

from __future__ import annotations

from pathlib import Path

import typer

PATH_HELP = "A trace (.json/.json.gz), a folder of ranks, or a job's profiler output folder."


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)
    app.command("export")(export_cmd)


def fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2) from None


def report_cmd(
    path: str = typer.Argument(..., help=PATH_HELP),
    out: Path = typer.Option(Path("report.html"), "-o", "--out", help="The HTML file to write."),
    title: str = typer.Option(None, "--title", help="Title shown in the report (default: the path)."),
) -> None:
    """Write the dashboard as one self-contained HTML file that opens offline."""
    from rich.console import Console

    from profiler.report.html import write_report

    console = Console(stderr=True)
    try:
        with console.status(f"building the report of {path}"):
            written = write_report(path, out, title=title)
    except ValueError as exc:
        fail(exc)
    console.print(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB)")


def export_cmd(
    path: str = typer.Argument(..., help=PATH_HELP),
    perfetto: Path = typer.Option(..., "--perfetto", help="Write a Chrome/Perfetto trace (JSON) here, for ui.perfetto.dev."),
) -> None:
    """Export the timeline (host -> device tracks, launch arrows, counters) as a Perfetto/Chrome trace."""
    from rich.console import Console

    from profiler.loader import load_profile
    from profiler.timeline.model import build_timeline
    from profiler.timeline.perfetto import write_perfetto

    console = Console(stderr=True)
    try:
        with console.status(f"exporting {path}"):
            model = build_timeline(load_profile(path))
            written = write_perfetto(model, perfetto)
    except ValueError as exc:
        fail(exc)
    console.print(f"wrote {written}: {len(model)} events on {len(model.tracks)} tracks; open it in ui.perfetto.dev")
