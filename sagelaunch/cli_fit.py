"""`sagelaunch fit JOB.yaml`: build the estimator a job file describes (the format `sagelaunch validate` reads)
and run it, locally or on SageMaker."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from sagelaunch import estimators
from sagelaunch.cli_output import clear_errors, console
from sagelaunch.cli_validate import load_estimator_args


def load_job_file(path: Path) -> tuple[Any, dict[str, Any]]:
    """JOB.yaml → (estimator, fit keyword arguments); the same file format `sagelaunch validate` reads."""
    framework, kwargs, fit_kwargs = load_estimator_args(path)
    cls = {"pytorch": estimators.PyTorch, "tensorflow": estimators.TensorFlow}[framework]
    return cls(**kwargs), fit_kwargs


def fit(
    job_file: Path = typer.Argument(..., help="YAML: estimator fields, `framework: pytorch|tensorflow`, "
                                              "optional `inputs` and `job_name`."),
    no_wait: bool = typer.Option(False, "--no-wait", help="Return once the job is created."),
    no_logs: bool = typer.Option(False, "--no-logs", help="Wait without streaming the job's logs."),
) -> None:
    with clear_errors():
        estimator, fit_kwargs = load_job_file(job_file)
        estimator.fit(wait=not no_wait, logs=not no_logs, **fit_kwargs)
        job = estimator.latest_training_job
        name = getattr(job, "name", None) or fit_kwargs.get("job_name")
        if no_wait:
            console().print(f"Started {name}. Follow it with `sagelaunch jobs logs {name} --follow`.", markup=False)


def register(app: typer.Typer) -> None:
    app.command("fit", help="Run the job described by JOB.yaml (estimator fields + framework, inputs, job_name).")(fit)
