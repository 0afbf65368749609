"""`sagelaunch jobs list|describe|logs|doctor|stop`, for local and SageMaker jobs.

Local jobs come from the local registry, SageMaker jobs from the SageMaker API, both through the launcher's
backend interface (list_jobs, and attach(name), which picks the right one). Errors print as one clear message
(exit 1), never a traceback.
"""

from __future__ import annotations

import json
import sys
import warnings
from enum import Enum
from typing import Any, Optional

import typer

from sagelaunch.cli_output import clear_errors, console
from sagelaunch.jobspec.contract import STATUSES
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.suggest import did_you_mean
from sagelaunch.launcher import AWSError, attach, list_jobs, repair_registry

jobs_app = typer.Typer(name="jobs", help="List, describe, follow and stop training jobs (local and SageMaker).",
                       no_args_is_help=True, add_completion=False)


class Backend(str, Enum):
    all = "all"
    local = "local"
    sagemaker = "sagemaker"


def _attach(name: str, region: Optional[str]):
    return attach(name, **({"region": region} if region else {}))


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if hasattr(value, "strftime") else str(value or "")


def register(app: typer.Typer) -> None:
    app.add_typer(jobs_app, name="jobs")


@jobs_app.command("list", help="Local and SageMaker jobs, newest first.")
def list_cmd(
    status: Optional[str] = typer.Option(None, "--status", help=f"Only jobs in this status: {', '.join(STATUSES)}."),
    backend: Backend = typer.Option(Backend.all, "--backend", help="Where to look."),
    region: Optional[str] = typer.Option(None, "--region", help="SageMaker region (default: AWS config)."),
    max_results: int = typer.Option(50, "--max", min=1, max=100, help="At most this many SageMaker jobs."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    with clear_errors():
        if status is not None and status not in STATUSES:
            hint = did_you_mean(status, STATUSES, form=". Did you mean {}?")
            raise SagelaunchError(f"--status {status!r} is not a job status; allowed: {', '.join(STATUSES)}"
                                  + (hint or "."), field="--status", value=status, allowed=", ".join(STATUSES),
                                  fix=hint.removeprefix(". "))
        rows: list[dict[str, Any]] = []
        if backend in (Backend.all, Backend.local):
            with warnings.catch_warnings(record=True) as damage:
                warnings.simplefilter("always")
                local = list_jobs("local", status=status)
            for warning in damage:  # one bad record never hides the good ones: say which were left out
                console(stderr=True).print(f"warning: {warning.message}", markup=False, style="yellow")
            rows += [{"Name": r["TrainingJobName"], "Backend": "local", "Status": r["TrainingJobStatus"],
                      "Created": _when(r.get("CreationTime"))} for r in local]
        if backend in (Backend.all, Backend.sagemaker):
            try:
                rows += [{"Name": s["TrainingJobName"], "Backend": "sagemaker", "Status": s["TrainingJobStatus"],
                          "Created": _when(s.get("CreationTime"))}
                         for s in list_jobs("sagemaker", status, region=region, max_results=max_results)]
            except (AWSError, ValueError) as exc:
                if backend is Backend.sagemaker:
                    raise
                console(stderr=True).print(f"warning: SageMaker jobs not listed: {exc}", markup=False)
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
            return
        from rich.measure import Measurement
        from rich.table import Column, Table

        # names stay whole on one line so they can be copied into `jobs describe/logs/stop`
        table = Table(Column("Name", no_wrap=True, overflow="ignore"), "Backend", "Status", "Created",
                      title=f"{len(rows)} training jobs")
        for row in rows:
            table.add_row(row["Name"], row["Backend"], row["Status"], row["Created"])
        out = console()
        # a narrow terminal gets a wider table (lines run on) rather than cut names
        natural = Measurement.get(out, out.options.update_width(10_000), table).maximum
        out.width = max(out.width, natural)
        out.print(table)


@jobs_app.command("describe", help="The job's DescribeTrainingJob record as JSON.")
def describe_cmd(
    name: str = typer.Argument(..., help="Training job name."),
    region: Optional[str] = typer.Option(None, "--region", help="SageMaker region (default: AWS config)."),
) -> None:
    with clear_errors():
        typer.echo(json.dumps(_attach(name, region).describe(), indent=2, default=str))


@jobs_app.command("logs", help="Print the job's logs, each line prefixed by its host; --follow tails until it ends.")
def logs_cmd(
    name: str = typer.Argument(..., help="Training job name."),
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing until the job ends."),
    region: Optional[str] = typer.Option(None, "--region", help="SageMaker region (default: AWS config)."),
) -> None:
    with clear_errors():
        if follow and hasattr(sys.stdout, "reconfigure"):  # each line as it comes; else block-buffered: fast
            sys.stdout.reconfigure(line_buffering=True)
        for line in _attach(name, region).logs(follow=follow):
            sys.stdout.write(line + "\n")
        sys.stdout.flush()


@jobs_app.command("doctor", help="Repair a damaged local job registry (registry.db), keeping every record that can "
                  "be read; the damaged file is set aside, never deleted. Run it while no local job runs.")
def doctor_cmd() -> None:
    with clear_errors():
        for line in repair_registry().lines():
            console().print(line, markup=False)


@jobs_app.command("stop", help="Ask a running job to stop (it becomes Stopping, then Stopped).")
def stop_cmd(
    name: str = typer.Argument(..., help="Training job name."),
    region: Optional[str] = typer.Option(None, "--region", help="SageMaker region (default: AWS config)."),
) -> None:
    with clear_errors():
        job = _attach(name, region)
        job.stop()
        console().print(f"Stopping {name} ({job.backend}); `sagelaunch jobs describe {name}` shows its status.",
                         markup=False)
