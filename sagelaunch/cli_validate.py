"""`sagelaunch validate JOB.yaml [--request]`: check a job offline; print ✓ and a summary, or every error.

JOB.yaml holds estimator fields plus `framework: pytorch|tensorflow` (and optionally the fit()
arguments `inputs` and `job_name`). Relative paths are relative to the file. Exit 1 on errors.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from jobspec.catalog import FRAMEWORKS

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
    given_framework = data.pop("framework", None)
    fit_kwargs = {key: data.pop(key) for key in FIT_KEYS if key in data}
    base = path.parent
    source = data.get("source_dir")
    if isinstance(source, str) and "://" not in source and not Path(source).is_absolute():
        data["source_dir"] = str((base / source).resolve())
    entry = data.get("entry_point")
    if source is None and isinstance(entry, str) and not Path(entry).is_absolute():
        data["entry_point"] = str((base / entry).resolve())
    try:
        framework = check_framework(given_framework)
    except ValueError as err:
        raise FrameworkError(str(err), closest_framework(given_framework), data, fit_kwargs) from None
    return framework, data, fit_kwargs


# pydantic errors whose message already names the value (ours), or that have no single value
VALUE_IN_MESSAGE = {"value_error", "missing", "assertion_error"}


class FrameworkError(ValueError):
    """`framework:` is missing or wrong; carries the rest of the file so its other problems can be shown."""

    def __init__(self, message: str, likely: str | None, kwargs: dict[str, Any], fit_kwargs: dict[str, Any]):
        super().__init__(message)
        self.likely, self.kwargs, self.fit_kwargs = likely, kwargs, fit_kwargs


def closest_framework(value: Any) -> str | None:
    import difflib

    matches = difflib.get_close_matches(str(value).lower(), FRAMEWORKS, n=1) if value is not None else []
    return matches[0] if matches else None


def check_framework(value: Any) -> str:
    framework = str(value).lower() if value is not None else ""
    if framework not in FRAMEWORKS:
        likely = closest_framework(value)
        hint = f" (did you mean {likely!r}?)" if likely else ""
        raise ValueError(f"framework={value!r} is not supported{hint}; allowed: {', '.join(FRAMEWORKS)} "
                         "(e.g. `framework: pytorch` in the file)")
    return framework


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_lines(err: Exception) -> list[str]:
    """One line per problem: `field: message (value=…)` (pydantic errors carry their field in loc)."""
    from pydantic import ValidationError

    if not isinstance(err, ValidationError):
        return [str(err)]
    lines = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"])
        value = f" (value={_shown(e['input'])})" if e["type"] not in VALUE_IN_MESSAGE and loc else ""
        for msg in e["msg"].removeprefix("Value error, ").splitlines():  # cross-field checks: one per line
            line = f"{loc}: {msg}" if loc and not msg.startswith(loc.split(".")[0]) else msg
            lines.append(line + value)
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
    from launcher.request import compile_create_training_job_request

    lines: list[str] = []
    try:
        try:
            framework, kwargs, fit_kwargs = load_estimator_args(job_file)
        except FrameworkError as err:  # report it, and check the rest as the framework it most likely means
            lines.append(str(err))
            framework, kwargs, fit_kwargs = err.likely, err.kwargs, err.fit_kwargs
        if framework is not None:
            cls = {"pytorch": estimators.PyTorch, "tensorflow": estimators.TensorFlow}[framework]
            est = cls(**kwargs)
            spec = est.to_spec(fit_kwargs.get("job_name"), fit_kwargs.get("inputs"))
    except (ValidationError, ValueError, TypeError) as err:
        lines += error_lines(err)
    if lines:
        typer.echo(f"✗ {job_file}: {len(lines)} problem(s)", err=True)
        for line in lines:
            typer.echo(f"  - {line}", err=True)
        raise typer.Exit(1) from None
    if request:
        typer.echo(json.dumps(compile_create_training_job_request(spec), indent=2))
    else:
        typer.echo(f"✓ {job_file.name}: {summary(est, spec)}")


def register(app: typer.Typer) -> None:
    app.command("validate", help="Check JOB.yaml offline; --request prints the CreateTrainingJob request.")(validate)
