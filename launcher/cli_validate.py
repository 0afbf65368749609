"""`sagelaunch validate JOB.yaml [--request]`: check a job offline; print ✓ and a summary, or every error.

JOB.yaml holds estimator fields plus `framework: pytorch|tensorflow` (and optionally the fit()
arguments `inputs` and `job_name`). Relative paths are relative to the file. Exit 1 on errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

FIT_KEYS = ("inputs", "job_name")


def load_estimator_args(path: Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """JOB.yaml → (framework, estimator kwargs, fit kwargs); ValueError on a malformed file."""
    import yaml

    if not path.is_file():
        raise ValueError(f"{path}: no such file; pass the path of a JOB.yaml")
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as err:
        raise ValueError(f"{path}: not valid YAML ({err})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of estimator fields, got {type(data).__name__}")
    framework = str(data.pop("framework", "")).lower()
    if framework not in ("pytorch", "tensorflow"):
        raise ValueError(f"framework={framework or None!r} is not supported; allowed: pytorch, tensorflow "
                         "(add `framework: pytorch` to the file)")
    fit_kwargs = {key: data.pop(key) for key in FIT_KEYS if key in data}
    base = path.parent
    source = data.get("source_dir")
    if isinstance(source, str) and "://" not in source and not Path(source).is_absolute():
        data["source_dir"] = str((base / source).resolve())
    entry = data.get("entry_point")
    if source is None and isinstance(entry, str) and not Path(entry).is_absolute():
        data["entry_point"] = str((base / entry).resolve())
    return framework, data, fit_kwargs


def error_lines(err: Exception) -> list[str]:
    """One line per problem: `field: message` (pydantic errors carry their field in loc)."""
    from pydantic import ValidationError

    if not isinstance(err, ValidationError):
        return [str(err)]
    lines = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"])
        for msg in e["msg"].removeprefix("Value error, ").splitlines():  # cross-field checks: one per line
            lines.append(f"{loc}: {msg}" if loc and not msg.startswith(loc.split(".")[0]) else msg)
    return lines


def summary(est: Any, spec: Any) -> str:
    r = est.resolved
    parts = [
        f"{spec.framework} {spec.framework_version} ({spec.py_version}) on {spec.instance_count} × {spec.instance_type}",
        f"in {spec.region}",
        f"{spec.processes_per_host} process(es)/host" + (f", {r.plan.strategy}" if r.plan.strategy != "none" else ""),
        "profiler " + ("off" if spec.profiler is None or spec.profiler.disable_profiler else "on"),
        f"image {spec.image_uri}",
    ]
    return "; ".join(parts)


def validate(
    job_file: Path = typer.Argument(..., help="YAML with estimator fields and `framework: pytorch|tensorflow`."),
    request: bool = typer.Option(False, "--request", help="Print the compiled CreateTrainingJob request (dry run)."),
) -> None:
    """Check a job offline (versions, region, instance type, images, distribution, profiler)."""
    from pydantic import ValidationError

    import estimators

    try:
        framework, kwargs, fit_kwargs = load_estimator_args(job_file)
        cls = {"pytorch": estimators.PyTorch, "tensorflow": estimators.TensorFlow}[framework]
        est = cls(**kwargs)
        spec = est.to_spec(fit_kwargs.get("job_name"), fit_kwargs.get("inputs"))
    except (ValidationError, ValueError, TypeError) as err:
        lines = error_lines(err)
        typer.echo(f"✗ {job_file}: {len(lines)} problem(s)", err=True)
        for line in lines:
            typer.echo(f"  - {line}", err=True)
        raise typer.Exit(1) from None
    if request:
        typer.echo(json.dumps(spec.to_create_training_job_request(), indent=2))
    else:
        typer.echo(f"✓ {job_file.name}: {summary(est, spec)}")


def register(app: typer.Typer) -> None:
    app.command("validate", help="Check JOB.yaml offline; --request prints the CreateTrainingJob request.")(validate)
