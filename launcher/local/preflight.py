"""Checks that run before any process of a local job starts; each failure is a ValueError saying what to fix."""

from __future__ import annotations

import importlib.metadata as md
import importlib.util as iu
import json
import os
import subprocess
import sys
from pathlib import Path

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.net import port_is_free
from sagelaunch.jobspec.spec import TrainingJobSpec
from sagelaunch.jobspec.suggest import closest, did_you_mean
from sagelaunch.launcher.common.sourcedir import iter_source_files, list_source_files, loop_error, symlink_loop

# distributions that provide each framework's module, in the order we look for them
_FRAMEWORK_PACKAGES = {
    "pytorch": ("torch", ("torch",)),
    "tensorflow": ("tensorflow", ("tensorflow", "tensorflow-cpu", "tensorflow-macos", "tf-nightly")),
}
_PROBE = """
import importlib.metadata as md, importlib.util as iu, json, sys
module, dists = sys.argv[1], sys.argv[2:]
version = None
if iu.find_spec(module) is not None:
    version = "unknown"
    for dist in dists:
        try:
            version = md.version(dist); break
        except md.PackageNotFoundError:
            pass
print(json.dumps(version))
"""


def source_files(spec: TrainingJobSpec) -> list[tuple[Path, str]]:
    """The files of the job's code, after checking the entry point is among them."""
    if spec.code.source_dir is not None and spec.code.source_dir.startswith("s3://"):
        return []  # fetched by the backend; the entry point is checked after extraction
    if spec.code.source_dir is not None:
        root = Path(spec.code.source_dir).expanduser()
        check_no_loop(root, "source_dir")
        if not root.is_dir():
            fix = f"pass the folder holding {spec.code.entry_point!r}"
            raise SagelaunchError(f"source_dir {spec.code.source_dir!r} is not a folder; {fix}", field="source_dir",
                                  value=spec.code.source_dir, allowed="a folder", fix=fix)
        files = list_source_files(root, spec.code.entry_point, spec.code.ignore_patterns, spec.code.dependencies)
        names = [name for _, name in files]
        if spec.code.entry_point not in names:
            hint = (did_you_mean(spec.code.entry_point, names, form="did you mean {}?")
                    or "pass a path relative to source_dir")
            raise SagelaunchError(f"entry_point {spec.code.entry_point!r} is not in source_dir {spec.code.source_dir!r} "
                                  f"(or it is excluded by ignore_patterns); {hint}", field="entry_point",
                                  value=spec.code.entry_point, allowed=f"a file in source_dir {spec.code.source_dir!r}", fix=hint)
        return files
    entry = Path(spec.code.entry_point_path or spec.code.entry_point).expanduser()
    check_no_loop(entry, "entry_point")
    if not entry.is_file():
        siblings = [p.name for p in entry.parent.glob("*")] if entry.parent.is_dir() else []
        close = closest(entry.name, siblings)
        hint = f"did you mean {str(entry.parent / close[0])!r}?" if close else "check the path"
        raise SagelaunchError(f"entry_point {str(entry)!r} does not exist; {hint}", field="entry_point", value=str(entry),
                              allowed="an existing file", fix=hint)
    return list(iter_source_files(None, str(entry), (), spec.code.dependencies))


def framework_version(python: str, framework: str) -> str | None:
    """The installed version of the job's framework in `python` (None: not installed)."""
    module, dists = _FRAMEWORK_PACKAGES[framework]
    # compare without resolving links: a venv's python links to its base interpreter
    if os.path.abspath(python) == os.path.abspath(sys.executable):
        if iu.find_spec(module) is None:
            return None
        for dist in dists:
            try:
                return md.version(dist)
            except md.PackageNotFoundError:
                pass
        return "unknown"
    try:
        out = subprocess.run([python, "-c", _PROBE, module, *dists], capture_output=True, text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as error:
        raise SagelaunchError(f"python {python!r}: cannot run it to look for {module} ({error}); pass an existing "
                              "interpreter", field="python", value=python, allowed="a Python interpreter that runs",
                              fix="pass an existing interpreter") from error
    return json.loads(out.stdout.strip().splitlines()[-1])


def check_framework(spec: TrainingJobSpec, python: str) -> str | None:
    """Raise when the framework is missing; return a one-line warning when its version differs."""
    module = _FRAMEWORK_PACKAGES[spec.framework][0]
    installed = framework_version(python, spec.framework)
    if installed is None:
        extra = "torch" if spec.framework == "pytorch" else "tensorflow-cpu (or tensorflow)"
        fix = f"install it (pip install {extra}) or pass python= an interpreter that has it"
        raise SagelaunchError(f"framework {spec.framework!r}: {module} is not installed in {python}; local jobs run in "
                              f"this Python environment — {fix}", field="framework", value=spec.framework,
                              allowed=f"a framework installed in {python}", fix=fix)
    if installed != "unknown" and not same_release(spec.framework_version, installed):
        return (f"warning: job {spec.job_name} asks for {spec.framework} {spec.framework_version}; it runs locally "
                f"with the installed {module} {installed}")
    return None


def same_release(wanted: str, installed: str) -> bool:
    """'2.1' matches 2.1.x; '2.1.0' needs 2.1.0 (local tags like +cpu ignored)."""
    def parts(version: str) -> list[str]:
        return version.split("+")[0].split(".")

    want = parts(wanted)
    return parts(installed)[: len(want)] == want


def check_port(port: int, option: str) -> int:
    if not (0 < port < 65536):
        raise SagelaunchError(f"{option}={port}: a TCP port is 1–65535", field=option, value=port, allowed="1–65535",
                              fix=f"pick a port in 1–65535 or leave {option} unset")
    if not port_is_free(port):
        fix = f"pick another or leave {option} unset to use a free one"
        raise SagelaunchError(f"{option}={port}: the port is in use on 127.0.0.1; {fix}", field=option, value=port,
                              allowed="a free port", fix=fix)
    return port


def check_no_loop(path: Path, field: str) -> None:
    """A symlink loop in a local path is named before anything is created (resolving it would raise)."""
    if symlink_loop(path):
        raise loop_error(field, path)


def check_writable_folder(path: Path, field: str) -> None:
    """The folder exists and is writable, or can be created."""
    check_no_loop(path, field)
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and (not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK)):
        raise SagelaunchError(f"{field} {str(path)!r}: {str(probe)!r} is not a writable folder; choose a folder you "
                              "can write to", field=field, value=str(path), allowed="a writable folder",
                              fix="choose a folder you can write to")
