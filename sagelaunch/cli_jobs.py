"""`sagelaunch fit JOB.yaml` and `sagelaunch jobs list|describe|logs|stop`, for local and SageMaker jobs.

Local jobs come from the local registry, SageMaker jobs from the SageMaker API, both through the
backend interface (`sagelaunch.launcher.backends`: list_jobs, and attach(name), which picks the right one). Imports stay inside commands so `sagelaunch --help`
stays fast. Errors print as one clear message (exit 1), never a traceback.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from enum import Enum
from pathlib import Path
from typing import Any, Optional

import typer

from sagelaunch.jobspec.contract import STATUSES

jobs_app = typer.Typer(name="jobs", help="List, describe, follow and stop training jobs (local and SageMaker).",
                       no_args_is_help=True, add_completion=False)


class Backend(str, Enum):
    all = "all"
    local = "local"
    sagemaker = "sagemaker"


def _console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


@contextlib.contextmanager
def _clear_errors():
    """Known failures → one red line and exit code 1."""
    from sagelaunch.jobspec.errors import SagelaunchException

    try:
        yield
    except (SagelaunchException, ValueError, KeyError, FileNotFoundError) as exc:
        from rich.text import Text

        from sagelaunch.cli_validate import error_lines

        lines = [str(exc.args[0])] if isinstance(exc, KeyError) and exc.args else error_lines(exc)
        console = _console(stderr=True)
        for line in lines:
            console.print(Text("error: ", style="bold red") + Text(line))
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


def load_job_file(path: Path) -> tuple[Any, dict[str, Any]]:
    """JOB.yaml → (estimator, fit keyword arguments); the same file format `sagelaunch validate` reads."""
    from sagelaunch import estimators
    from sagelaunch.cli_validate import load_estimator_args

    framework, kwargs, fit_kwargs = load_estimator_args(path)
    cls = {"pytorch": estimators.PyTorch, "tensorflow": estimators.TensorFlow}[framework]
    return cls(**kwargs), fit_kwargs


def _attach(name: str, region: Optional[str]):
    from sagelaunch.launcher import attach

    return attach(name, **({"region": region} if region else {}))


def _when(value: Any) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S") if hasattr(value, "strftime") else str(value or "")


def register(app: typer.Typer) -> None:
    app.command("fit", help="Run the job described by JOB.yaml (estimator fields + framework, inputs, job_name).")(fit)
    app.add_typer(jobs_app, name="jobs")


def fit(
    job_file: Path = typer.Argument(..., help="YAML: estimator fields, `framework: pytorch|tensorflow`, "
                                              "optional `inputs` and `job_name`."),
    no_wait: bool = typer.Option(False, "--no-wait", help="Return once the job is created."),
    no_logs: bool = typer.Option(False, "--no-logs", help="Wait without streaming the job's logs."),
) -> None:
    with _clear_errors():
        estimator, fit_kwargs = load_job_file(job_file)
        estimator.fit(wait=not no_wait, logs=not no_logs, **fit_kwargs)
        job = estimator.latest_training_job
        name = getattr(job, "name", None) or fit_kwargs.get("job_name")
        if no_wait:
            _console().print(f"Started {name}. Follow it with `sagelaunch jobs logs {name} --follow`.", markup=False)


@jobs_app.command("list", help="Local and SageMaker jobs, newest first.")
def list_cmd(
    status: Optional[str] = typer.Option(None, "--status", help=f"Only jobs in this status: {', '.join(STATUSES)}."),
    backend: Backend = typer.Option(Backend.all, "--backend", help="Where to look."),
    region: Optional[str] = typer.Option(None, "--region", help="SageMaker region (default: AWS config)."),
    max_results: int = typer.Option(50, "--max", min=1, max=100, help="At most this many SageMaker jobs."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    with _clear_errors():
        if status is not None and status not in STATUSES:
            from sagelaunch.jobspec.errors import SagelaunchError
            from sagelaunch.jobspec.suggest import did_you_mean

            hint = did_you_mean(status, STATUSES, form=". Did you mean {}?")
            raise SagelaunchError(f"--status {status!r} is not a job status; allowed: {', '.join(STATUSES)}"
                                  + (hint or "."), field="--status", value=status, allowed=", ".join(STATUSES),
                                  fix=hint.removeprefix(". "))
        rows: list[dict[str, Any]] = []
        if backend in (Backend.all, Backend.local):
            from sagelaunch.launcher import list_jobs

            with warnings.catch_warnings(record=True) as damage:
                warnings.simplefilter("always")
                local = list_jobs("local", status=status)
            for warning in damage:  # one bad record never hides the good ones: say which were left out
                _console(stderr=True).print(f"warning: {warning.message}", markup=False, style="yellow")
            rows += [{"Name": r["TrainingJobName"], "Backend": "local", "Status": r["TrainingJobStatus"],
                      "Created": _when(r.get("CreationTime"))} for r in local]
        if backend in (Backend.all, Backend.sagemaker):
            from sagelaunch.launcher import AWSError, list_jobs

            try:
                rows += [{"Name": s["TrainingJobName"], "Backend": "sagemaker", "Status": s["TrainingJobStatus"],
                          "Created": _when(s.get("CreationTime"))}
                         for s in list_jobs("sagemaker", status, region=region, max_results=max_results)]
            except (AWSError, ValueError) as exc:
                if backend is Backend.sagemaker:
                    raise
                _console(stderr=True).print(f"warning: SageMaker jobs not listed: {exc}", markup=False)
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
            return
        from rich.table import Table

        from rich.table import Column

        # names stay whole on one line so they can be copied into `jobs describe/logs/stop`
        table = Table(Column("Name", no_wrap=True, overflow="ignore"), "Backend", "Status", "Created",
                      title=f"{len(rows)} training jobs")
        for row in rows:
            table.add_row(row["Name"], row["Backend"], row["Status"], row["Created"])
        from rich.measure import Measurement

        console = _console()
        # a narrow terminal gets a wider table (lines run on) rather than cut names
        natural = Measurement.get(console, console.options.update_width(10_000), table).maximum
        console.width = max(console.width, natural)
        console.print(table)


@jobs_app.command("describe", help="The job's DescribeTrainingJob record as JSON.")
def describe_cmd(
    name: str = typer.Argument(..., help="Training job name."),
    region: Optional[str] = typer.Option(None, "--region", help="SageMaker region (default: AWS config)."),
) -> None:
    with _clear_errors():
        typer.echo(json.dumps(_attach(name, region).describe(), indent=2, default=str))


@jobs_app.command("logs", help="Print the job's logs, each line prefixed by its host; --follow tails until it ends.")
def logs_cmd(
    name: str = typer.Argument(..., help="Training job name."),
    follow: bool = typer.Option(False, "--follow", "-f", help="Keep printing until the job ends."),
    region: Optional[str] = typer.Option(None, "--region", help="SageMaker region (default: AWS config)."),
) -> None:
    import sys

    with _clear_errors():
        if follow and hasattr(sys.stdout, "reconfigure"):  # each line as it comes; else block-buffered: fast
            sys.stdout.reconfigure(line_buffering=True)
        for line in _attach(name, region).logs(follow=follow):
            sys.stdout.write(line + "\n")
        sys.stdout.flush()


@jobs_app.command("doctor", help="Repair a damaged local job registry (registry.db), keeping every record that can "
                  "be read; the damaged file is set aside, never deleted. Run it while no local job runs.")
def doctor_cmd() -> None:
    with _clear_errors():
        from sagelaunch.launcher import repair_registry as repair

        for line in repair().lines():
            _console().print(line, markup=False)


@jobs_app.command("stop", help="Ask a running job to stop (it becomes Stopping, then Stopped).")
def stop_cmd(
    name: str = typer.Argument(..., help="Training job name."),
    region: Optional[str] = typer.Option(None, "--region", help="SageMaker region (default: AWS config)."),
) -> None:
    with _clear_errors():
        job = _attach(name, region)
        job.stop()
        _console().print(f"Stopping {name} ({job.backend}); `sagelaunch jobs describe {name}` shows its status.",
                         markup=False)
