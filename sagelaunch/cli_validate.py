"""`sagelaunch validate JOB.yaml [--request]`: check a job offline; print ✓ and a summary, or every error.

JOB.yaml holds estimator fields plus `framework: pytorch|tensorflow` (and optionally the fit()
arguments `inputs` and `job_name`). Relative paths are relative to the file. Exit 1 on errors.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

import typer
from pydantic import ValidationError

from sagelaunch import estimators
from sagelaunch.cli_output import error_lines
from sagelaunch.jobspec.catalog import FRAMEWORKS
from sagelaunch.jobspec.errors import SagelaunchError, parts_of, shown
from sagelaunch.jobspec.fields import ShellExpansionWarning
from sagelaunch.jobspec.suggest import closest, did_you_mean, fix_from_hint
from sagelaunch.launcher import compile_create_training_job_request, resolve_local_channels

FIT_KEYS = ("inputs", "job_name")
JOB_FILE = "JOB.yaml"  # the field an error about the job file itself names


MAX_JOB_FILE_BYTES = 1_000_000  # a job file is a page of settings; this bounds the parser's work and memory
MAX_YAML_NESTING = 64  # deeper nesting is refused before PyYAML's recursive composer reaches Python's limit


class JobFileRefused(SagelaunchError):
    """A job file refused before anything is built from it (aliases, nesting)."""


def _job_file_loader():
    """yaml.SafeLoader without aliases or duplicate keys, and with bounded nesting.

    An alias (*name) repeats a node by reference: nine levels of nine aliases are 491 bytes of YAML and a
    billion values once anything walks or serialises them. Job files have no use for them, so they are refused
    while composing, before any Python object exists.
    """
    import yaml

    class JobFileLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent, index):
            event = self.peek_event()
            where = f"line {event.start_mark.line + 1}, column {event.start_mark.column + 1}"
            if isinstance(event, yaml.AliasEvent):
                raise JobFileRefused(f"{where}: YAML alias *{event.anchor} is not allowed in a job file (aliases "
                                     "can expand a few bytes into gigabytes); write the value out in full",
                                     field=JOB_FILE, value=f"*{event.anchor}", allowed="values written out (no aliases)",
                                     fix="write the value out in full")
            if self.depth >= MAX_YAML_NESTING:
                raise JobFileRefused(f"{where}: nested more than {MAX_YAML_NESTING} levels deep; allowed: at most "
                                     f"{MAX_YAML_NESTING} — flatten the value", field=JOB_FILE, value=where,
                                     allowed=f"at most {MAX_YAML_NESTING} levels", fix="flatten the value")
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_mapping(self, node, deep=False):
            first_line: dict[Any, int] = {}  # YAML itself keeps the last of two equal keys, silently
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                line = key_node.start_mark.line + 1
                try:
                    if key in first_line:
                        raise JobFileRefused(
                            f"line {line}, column {key_node.start_mark.column + 1}: key {shown(key)} is given twice "
                            f"in the same mapping (first on line {first_line[key]}); YAML would silently keep the "
                            "last one — keep only the value you mean", field=JOB_FILE, value=key,
                            allowed="each key once per mapping", fix="keep only the value you mean")
                    first_line[key] = line
                except TypeError:  # an unhashable key: the constructor refuses it with its own message
                    pass
            return super().construct_mapping(node, deep)

    return JobFileLoader


def read_job_file(path: Path) -> Any:
    """The YAML document of a job file; ValueError naming the file on any problem (size, encoding, syntax)."""
    import yaml

    if not path.is_file():
        raise SagelaunchError(f"{path}: no such file; pass the path of a JOB.yaml", field=JOB_FILE, value=str(path),
                              allowed="an existing YAML file", fix="pass the path of a JOB.yaml")
    size = path.stat().st_size
    if size > MAX_JOB_FILE_BYTES:
        raise SagelaunchError(f"{path}: {size:,} bytes; a job file is at most {MAX_JOB_FILE_BYTES:,} bytes — put data "
                              "in an input channel, not in the job file", field=JOB_FILE, value=str(path),
                              allowed=f"at most {MAX_JOB_FILE_BYTES:,} bytes",
                              fix="put data in an input channel, not in the job file")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise SagelaunchError(f"{path}: not UTF-8 text (byte 0x{raw[err.start]:02x} on line {line}); allowed: UTF-8 — "
                              "save the file as UTF-8", field=JOB_FILE, value=str(path), allowed="UTF-8 text",
                              fix="save the file as UTF-8") from None
    try:
        return yaml.load(text, Loader=_job_file_loader())  # noqa: S506 - a SafeLoader subclass
    except JobFileRefused as err:
        raise SagelaunchError(f"{path}: {err}", **err.parts()) from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        context = f" ({err.context})" if err.context else ""
        raise SagelaunchError(f"{path}: not valid YAML: {where}{err.problem}{context}; fix the syntax there",
                              field=JOB_FILE, value=str(path), allowed="YAML", fix=f"fix the syntax at {where or 'the error'}") from None
    except yaml.YAMLError as err:
        raise SagelaunchError(f"{path}: not valid YAML ({' '.join(str(err).split())})", field=JOB_FILE, value=str(path),
                              allowed="YAML", fix="fix the YAML syntax") from None


def load_estimator_args(path: Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """JOB.yaml → (framework, estimator kwargs, fit kwargs); ValueError on a malformed file."""
    data = read_job_file(path) or {}
    if not isinstance(data, dict):
        raise SagelaunchError(f"{path}: expected a mapping of estimator fields, got {type(data).__name__}",
                              field=JOB_FILE, value=data, allowed="a mapping of estimator fields",
                              fix="write `framework: pytorch` and the estimator's arguments as keys")
    given_framework = data.pop("framework", None)
    fit_kwargs = {key: data.pop(key) for key in FIT_KEYS if key in data}
    base = path.parent
    source = data.get("source_dir")
    if isinstance(source, str) and "://" not in source and not Path(source).is_absolute():
        data["source_dir"] = os.path.abspath(base / source)  # not resolve(): a symlink loop is reported later
    entry = data.get("entry_point")
    if source is None and isinstance(entry, str) and not Path(entry).is_absolute():
        data["entry_point"] = os.path.abspath(base / entry)
    planned = data.get("planned_model")  # the model's config.json, beside the job file like the code
    if isinstance(planned, str) and not Path(planned).is_absolute():
        data["planned_model"] = os.path.abspath(base / planned)
    if "inputs" in fit_kwargs:
        fit_kwargs["inputs"] = _inputs_beside(base, fit_kwargs["inputs"])
    try:
        framework = check_framework(given_framework)
    except ValueError as err:
        raise FrameworkError(str(err), closest_framework(given_framework), data, fit_kwargs, **parts_of(err)) from None
    return framework, data, fit_kwargs


def _inputs_beside(base: Path, inputs: Any) -> Any:
    """Relative local input paths are relative to the job file, like source_dir (URIs and ~ stay as they are)."""

    def beside(uri: Any) -> Any:
        if not isinstance(uri, str) or not uri or "://" in uri or uri.startswith("~") or "\x00" in uri:
            return uri
        return os.path.normpath(base.absolute() / uri)  # no resolve(): links are followed when the job reads them

    if isinstance(inputs, dict):
        return {name: beside(uri) for name, uri in inputs.items()}
    return beside(inputs)


def check_local_inputs(spec: Any) -> None:
    """A local job's local input paths exist and can be read (what the local backend checks first; no network)."""
    if spec.is_local:
        for channel in spec.inputs:
            if not channel.uri.startswith("s3://"):
                resolve_local_channels(channel)


class FrameworkError(SagelaunchError):
    """`framework:` is missing or wrong; carries the rest of the file so its other problems can be shown."""

    def __init__(self, message: str, likely: str | None, kwargs: dict[str, Any], fit_kwargs: dict[str, Any],
                 **parts: Any):
        super().__init__(message, **parts)
        self.likely, self.kwargs, self.fit_kwargs = likely, kwargs, fit_kwargs


def closest_framework(value: Any) -> str | None:
    matches = closest(str(value).lower(), FRAMEWORKS) if value is not None else []
    return matches[0] if matches else None


def check_framework(value: Any) -> str:
    framework = str(value).lower() if value is not None else ""
    if framework not in FRAMEWORKS:
        hint = did_you_mean(str(value).lower(), FRAMEWORKS) if value is not None else ""
        fix = "e.g. `framework: pytorch` in the file"
        raise SagelaunchError(f"framework={value!r} is not supported{hint}; allowed: {', '.join(FRAMEWORKS)} ({fix})",
                              field="framework", value=value, allowed=", ".join(FRAMEWORKS),
                              fix=fix_from_hint(hint, fix))
    return framework


def summary(est: Any, spec: Any) -> str:
    r, compute, profiler = est.resolved, spec.compute, spec.observability.profiler
    parts = [
        f"{spec.framework} {spec.framework_version} ({spec.py_version}) on {compute.instance_count} × {compute.instance_type}",
        f"in {spec.region}",
        f"{compute.processes_per_host} process(es)/host" + (f", {r.plan.strategy}" if r.plan.strategy != "none"
                                                            else ""),
        "profiler " + ("off" if profiler is None or profiler.disable_profiler else "on"),
        f"image {spec.image_uri}",
    ]
    return "; ".join(parts)


def validate(
    job_file: Path = typer.Argument(..., help="YAML with estimator fields and `framework: pytorch|tensorflow`."),
    request: bool = typer.Option(False, "--request", help="Print the compiled CreateTrainingJob request (dry run)."),
) -> None:
    """Check a job offline (versions, region, instance type, images, distribution, profiler)."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", ShellExpansionWarning)
        lines, est, spec = _check(job_file)
    notes = list(dict.fromkeys(str(w.message) for w in said if issubclass(w.category, ShellExpansionWarning)))
    for note in notes:  # valid, but the job would not see what the file says: said before ✓ or ✗
        typer.echo(f"  ! warning: {note}", err=True)
    if lines:
        typer.echo(f"✗ {job_file}: {len(lines)} problem(s)", err=True)
        for line in lines:
            typer.echo(f"  - {line}", err=True)
        raise typer.Exit(1) from None
    if request:
        typer.echo(json.dumps(compile_create_training_job_request(spec), indent=2))
    else:
        typer.echo(f"✓ {job_file.name}: {summary(est, spec)}")


def _check(job_file: Path) -> tuple[list[str], Any, Any]:
    """(problems, estimator, spec) of the job file; every problem found, none raised."""
    lines: list[str] = []
    est = spec = None
    try:
        framework: str | None
        try:
            framework, kwargs, fit_kwargs = load_estimator_args(job_file)
        except FrameworkError as err:  # report it, and check the rest as the framework it most likely means
            lines.append(str(err))
            framework, kwargs, fit_kwargs = err.likely, err.kwargs, err.fit_kwargs
        if framework is not None:
            cls = {"pytorch": estimators.PyTorch, "tensorflow": estimators.TensorFlow}[framework]
            est = cls(**kwargs)
            if est.git_config is None:  # the code fit() would ship exists (with git_config, fit clones it first)
                est.check_files()
            spec = est.to_spec(fit_kwargs.get("job_name"), fit_kwargs.get("inputs"))
            check_local_inputs(spec)
    except (ValidationError, ValueError, TypeError) as err:
        lines += error_lines(err)
    return lines, est, spec


def register(app: typer.Typer) -> None:
    app.command("validate", help="Check JOB.yaml offline; --request prints the CreateTrainingJob request.")(validate)
