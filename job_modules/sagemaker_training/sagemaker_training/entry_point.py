"""The toolkit's `entry_point.run` / `entry_point.install` in a local job: a launcher script that starts the user's
entry point the way the training container does (the code folder on the path, the program run from the job's code
folder with the given arguments and variables, a non-zero exit raised as errors.ExecuteUserScriptError). Paths are
the local job's own: its code folder is $SAGEMAKER_BASE_DIR/code, the folder the toolkit calls /opt/ml/code."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError

from sagemaker_training import errors
from sagemaker_training.environment import _MISSING_FIX
from sagemaker_training.runner import RunnerType

_PACKAGE_FIX = ("give the script as entry_point with its source_dir (a requirements.txt there is installed into the "
                "job's own cache), or pip-install the package yourself before the job")


def _code_dir() -> str:
    base = os.environ.get("SAGEMAKER_BASE_DIR")
    if not base:
        raise RuntimeError(f"sagemaker_training.entry_point: SAGEMAKER_BASE_DIR is not set, so there is no job code "
                           f"folder; {_MISSING_FIX}")
    return os.path.join(base, "code")


def _entry_point_type(dst: str, name: str) -> str:
    """The toolkit's three kinds: a package (setup.py beside it), a Python program, or a command."""
    if os.path.exists(os.path.join(dst, "setup.py")):
        return "package"
    return "program" if name.endswith(".py") else "command"


def _extract(uri: str, dst: str) -> None:
    """The code at `uri` into the job's code folder, as the toolkit's download_and_extract: a folder is copied, a
    .tar.gz unpacked. S3 is refused: the local backend already placed the job's code in that folder."""
    if uri.startswith("s3://"):
        raise SagelaunchError(f"entry_point.run(uri={uri!r}): a local job does not download code from S3",
                              field="uri", value=uri, allowed="a local folder or .tar.gz (the job's module_dir)",
                              fix="pass uri=environment.Environment().module_dir, the job's code folder")
    path = uri.removeprefix("file://")
    if os.path.isdir(path):
        if os.path.abspath(path) != os.path.abspath(dst):
            shutil.copytree(path, dst, dirs_exist_ok=True)
    elif os.path.isfile(path) and tarfile.is_tarfile(path):
        with tarfile.open(path) as archive:
            archive.extractall(dst, filter="data")
    else:
        raise SagelaunchError(f"entry_point.run(uri={uri!r}): neither a folder nor a tar archive", field="uri",
                              value=uri, allowed="a local folder or .tar.gz",
                              fix="pass uri=environment.Environment().module_dir, the job's code folder")


def install(name: str, dst: str, capture_error: bool = False) -> None:
    """Put `dst` on the path; a command entry point is made executable. A package entry point would be pip-installed
    into the Python the job shares with you, which a local job never changes: refused by name."""
    if dst not in sys.path:
        sys.path.insert(0, dst)
    kind = _entry_point_type(dst, name)
    if kind == "package":
        raise SagelaunchError(f"entry_point.install({name!r}): {dst} holds a setup.py; pip-installing it would change "
                              "the Python environment the local job shares with you", field="user_entry_point",
                              value=name, allowed="a Python script or an executable command", fix=_PACKAGE_FIX)
    if kind == "command":
        os.chmod(os.path.join(dst, name), 0o777)


def _command(name: str, args: list[str], dst: str) -> list[str]:
    if _entry_point_type(dst, name) == "program":
        return [sys.executable, name, *args]
    return [f"./{name}", *args]  # the shell line below runs it: the toolkit's `/bin/sh -c ./name args`


def _shell_line(cmd: list[str]) -> str:
    """The toolkit joins the command with spaces and runs it through /bin/sh (process.run_async →
    create_subprocess_shell), as the local backend starts the job's own script: an argument with a space splits."""
    return " ".join(cmd)


def _wait_for(process: subprocess.Popen, cmd: list[str], capture_error: bool) -> None:
    """Wait; stderr is streamed on and, when captured, kept for the error as the toolkit does."""
    captured = []
    if capture_error and process.stderr is not None:
        for line in process.stderr:
            sys.stderr.write(line)
            captured.append(line)
    code = process.wait()
    if code:
        raise errors.ExecuteUserScriptError(cmd=" ".join(cmd), return_code=code,
                                            output="".join(captured) if capture_error else None)


def run(uri: str, user_entry_point: str, args: list[str], env_vars: dict[str, str] | None = None,
        wait: bool = True, capture_error: bool = False, runner: Any = RunnerType.Process,
        extra_opts: dict[str, str] | None = None) -> subprocess.Popen:
    """Start `user_entry_point` from the job's code folder as the toolkit does; returns its process (ended when
    `wait`). Only the Process runner runs locally: the MPI, SMDataParallel and PyTorchXLA runners are refused by name
    (the local backend starts distributed jobs itself, with torchrun, from the estimator's distribution)."""
    if runner is not RunnerType.Process:
        named = getattr(runner, "name", runner)
        raise SagelaunchError(f"entry_point.run(runner={named}): a local job runs the entry point as one process",
                              field="runner", value=str(named), allowed="runner.ProcessRunnerType",
                              fix="set distribution= on the estimator (the local backend starts one process per "
                                  "rank with torchrun) and run the entry point with runner.ProcessRunnerType")
    if extra_opts:
        raise SagelaunchError("entry_point.run(extra_opts=…): the options are MPI's, and a local job runs no MPI",
                              field="extra_opts", value=sorted(extra_opts), allowed="None",
                              fix="leave extra_opts out; the estimator's distribution sets the processes per host")
    dst = _code_dir()
    _extract(uri, dst)
    install(user_entry_point, dst, capture_error)
    os.environ.update(env_vars or {})  # the toolkit exports them for the script and for what runs after
    # No wait for the hosts' DNS names: a local job's hosts are names of the job folder, never looked up.
    cmd = _command(user_entry_point, list(args), dst)
    print(f"Invoking script with the following command:\n\n{' '.join(cmd)}\n", flush=True)
    process = subprocess.Popen(_shell_line(cmd), shell=True, env=os.environ, cwd=dst, text=True,
                               stderr=subprocess.PIPE if capture_error else None)
    if wait:
        _wait_for(process, cmd, capture_error)
    return process
