"""`sagelaunch profile report|export|timeline|ui`: the dashboard report, the Perfetto export, the offline timeline
and the profile browser.

Registered on part 1's `profile` Typer app by profiler/cli.py; heavy imports stay inside the commands.
"""

from __future__ import annotations

from pathlib import Path

import typer

PATH_HELP = "A trace (.json/.json.gz), a folder of ranks, or a job's profiler output folder."


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)
    app.command("export")(export_cmd)
    app.command("timeline")(timeline_cmd)
    app.command("ui")(ui_cmd)


def _fail(exc: Exception) -> None:
    typer.echo(f"error: {exc}", err=True)
    raise typer.Exit(2) from None


def _build(what: str, build):
    """Run build() under a spinner that says `what`; a profile that cannot be read is a one-line error."""
    from rich.console import Console

    console = Console(stderr=True)
    try:
        with console.status(what):
            return console, build()
    except ValueError as exc:
        _fail(exc)


def report_cmd(
    path: str = typer.Argument(..., help=PATH_HELP),
    out: Path = typer.Option(Path("report.html"), "-o", "--out", help="The HTML file to write."),
    title: str = typer.Option(None, "--title", help="Title shown in the report (default: the path)."),
) -> None:
    """Write the dashboard, with the findings, as one self-contained HTML file that opens offline."""
    from profiler.report.html import write_report

    console, written = _build(f"building the report of {path}", lambda: write_report(path, out, title=title))
    console.print(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB)")


def export_cmd(
    path: str = typer.Argument(..., help=PATH_HELP),
    perfetto: Path = typer.Option(..., "--perfetto", help="Write a Chrome/Perfetto trace (JSON) here, for ui.perfetto.dev."),
) -> None:
    """Export the timeline (host -> device tracks, launch arrows, counters) as a Perfetto/Chrome trace."""
    from profiler.loader import load_profile
    from profiler.timeline.model import build_timeline
    from profiler.timeline.perfetto import write_perfetto

    def export():
        model = build_timeline(load_profile(path))
        return model, write_perfetto(model, perfetto)

    console, (model, written) = _build(f"exporting {path}", export)
    console.print(f"wrote {written}: {len(model)} events on {len(model.tracks)} tracks; open it in ui.perfetto.dev")


def timeline_cmd(
    path: str = typer.Argument(..., help=PATH_HELP),
    out: Path = typer.Option(Path("timeline.html"), "-o", "--out", help="The HTML file to write."),
    title: str = typer.Option(None, "--title", help="Title shown on the page (default: the path)."),
) -> None:
    """Write the timeline (every rank; steps, search, launch arrows) as one self-contained HTML file that opens offline."""
    from profiler.timeline.html import write_timeline

    console, (written, events) = _build(f"building the timeline of {path}", lambda: write_timeline(path, out, title=title))
    console.print(f"wrote {written} ({written.stat().st_size / 1e6:.1f} MB, {events:,} events)")


def ui_cmd(
    path: str = typer.Argument(None, help="Open this profile or trace directly (a trace file, a folder of ranks or a "
                               "job's profiler output); without it, pick a job from the list."),
    port: int = typer.Option(8008, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0 picks a free one)."),
    sagemaker: bool = typer.Option(True, "--sagemaker/--no-sagemaker", help="Also list SageMaker jobs' S3 profiles (needs AWS credentials)."),
    open_browser: bool = typer.Option(False, "--open", help="Open the page in the default web browser."),
) -> None:
    """Browse profiles in a local, read-only web app on 127.0.0.1: a given profile/trace, and the profiled jobs
    (local registry and SageMaker)."""
    from profiler.ui.server import serve

    if path is not None and not Path(path).exists():
        _fail(ValueError(f"path {path!r}: no such file or folder; give a trace (.json/.json.gz), a folder of ranks "
                         "or a job's profiler output"))
    try:
        serve(port, include_sagemaker=sagemaker, open_browser=open_browser, open_path=path)
    except OSError as exc:
        _fail(OSError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; pick another --port"))
