"""`sagelaunch profile ui`: the profile browser, given the application's job sources.

The other `profile` commands are the profiler's own (profiler/cli.py); this one needs to know where jobs
are — the launcher's registry and SageMaker — which only the application layer may import.
"""

from __future__ import annotations

from pathlib import Path

import typer

from sagelaunch.profile_sources import job_sources
from sagelaunch.profiler.cli_views import fail
from sagelaunch.profiler.ui.server import PortInUse, serve


def register(profile_app: typer.Typer) -> None:
    profile_app.command("ui")(ui_cmd)


def ui_cmd(
    path: str = typer.Argument(None, help="Open this profile or trace directly (a trace file, a folder of ranks or a "
                               "job's profiler output); without it, pick a job from the list."),
    port: int = typer.Option(8008, "--port", min=0, max=65535, help="Port on 127.0.0.1 (0 picks a free one)."),
    sagemaker: bool = typer.Option(True, "--sagemaker/--no-sagemaker", help="Also list SageMaker jobs' S3 profiles (needs AWS credentials)."),
    open_browser: bool = typer.Option(False, "--open", help="Open the page in the default web browser."),
) -> None:
    """Browse profiles in a local, read-only web app on 127.0.0.1: a given profile/trace, and the profiled jobs
    (local registry and SageMaker)."""
    if path is not None and not Path(path).exists():
        fail(ValueError(f"path {path!r}: no such file or folder; give a trace (.json/.json.gz), a folder of ranks "
                        "or a job's profiler output"))
    try:
        serve(port, include_sagemaker=sagemaker, open_browser=open_browser, job_sources=job_sources(), open_path=path)
    except PortInUse as exc:
        fail(exc)
    except OSError as exc:
        fail(OSError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}; pick another --port"))
