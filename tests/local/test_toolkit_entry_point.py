"""The training toolkit's `sagemaker_training.entry_point` in a local job (the stand-in, given where the real toolkit
is absent): a launcher script starts the user's program with `entry_point.run` as the container does, from the same
job facts (module_dir, to_cmd_args, to_env_vars); what cannot run locally is refused by name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sagelaunch.launcher.backends import submit
from tests.local.conftest import make_spec

LAUNCHER = textwrap.dedent("""\
    import json, os, sys
    from sagemaker_training import entry_point, environment, errors, runner
    env = environment.Environment()
    report = {"own_argv": sys.argv[1:]}
    entry_point.run(uri=env.module_dir, user_entry_point="inner.py", args=env.to_cmd_args(),
                    env_vars={**env.to_env_vars(), "FROM_LAUNCHER": "yes"}, runner=runner.ProcessRunnerType)
    entry_point.run(env.module_dir, "tool.sh", ["x", "y"], {})
    report["tool_executable"] = os.access("tool.sh", os.X_OK)
    try:
        entry_point.run(env.module_dir, "fails.py", ["--code", "3"], capture_error=True)
    except errors.ExecuteUserScriptError as err:
        report["failure"] = {"code": err.return_code, "text": str(err)}
    for bad in ({"runner": runner.SMDataParallelRunnerType}, {"extra_opts": {"sagemaker_mpi_num_of_processes": 4}}):
        try:
            entry_point.run(env.module_dir, "inner.py", [], **bad)
        except ValueError as err:
            report.setdefault("refused", []).append([err.field, str(err), err.fix])
    open(os.path.join(env.output_data_dir, "launcher.json"), "w").write(json.dumps(report))
    """)
INNER = textwrap.dedent("""\
    import json, os, sys
    out = os.environ["SM_OUTPUT_DATA_DIR"]
    json.dump({"argv": sys.argv[1:], "cwd": os.getcwd(), "from_launcher": os.environ.get("FROM_LAUNCHER")},
              open(os.path.join(out, "inner.json"), "w"))
    """)
TOOL = '#!/bin/sh\necho "$@" > "$SM_OUTPUT_DATA_DIR/tool.txt"\n'
FAILS = "import sys\nprint('bad input', file=sys.stderr)\nsys.exit(int(sys.argv[2]))\n"


@pytest.mark.slow
def test_a_launcher_script_runs_the_users_program_with_entry_point_run(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    for name, text in (("launcher.py", LAUNCHER), ("inner.py", INNER), ("tool.sh", TOOL), ("fails.py", FAILS)):
        (code / name).write_text(text)
    spec = make_spec("launcher.py", source_dir=str(code), output_path=str(tmp_path / "out"),
                     hyperparameters={"epochs": 2, "title": "two words"})
    job = submit(spec, wait=True, logs=False)
    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed", record.get("FailureReason")
    host = Path(record["JobDir"]) / "algo-1"
    data = host / "output" / "data"
    inner = json.loads((data / "inner.json").read_text())
    report = json.loads((data / "launcher.json").read_text())
    # the program gets its arguments as the job's own script got them (both through /bin/sh, split at the space)
    assert inner["argv"] == report["own_argv"] == ["--epochs", "2", "--title", "two", "words"]
    assert Path(inner["cwd"]) == host / "code" and inner["from_launcher"] == "yes"
    assert (data / "tool.txt").read_text() == "x y\n"
    assert report["tool_executable"]
    assert report["failure"]["code"] == "3" and "bad input" in report["failure"]["text"]
    assert "fails.py --code 3" in report["failure"]["text"]
    (runner_field, runner_text, runner_fix), (opts_field, _, _) = report["refused"]
    assert runner_field == "runner" and "SMDataParallel" in runner_text and "distribution=" in runner_fix
    assert opts_field == "extra_opts"
    assert not (code / "tool.sh").stat().st_mode & 0o111  # the user's own file is never changed


UNPACK = textwrap.dedent("""\
    import io, json, os, sys, tarfile
    from sagemaker_training import entry_point
    archive = os.path.join(sys.argv[1], "sourcedir.tar.gz")
    with tarfile.open(archive, "w:gz") as tar:
        body = b"import sys; print('unpacked', *sys.argv[1:])"
        info = tarfile.TarInfo("packed.py")
        info.size = len(body)
        tar.addfile(info, io.BytesIO(body))
    entry_point.run(archive, "packed.py", ["--n", "1"])
    refused = {}
    for uri in ("s3://bucket/code.tar.gz", os.path.join(sys.argv[1], "missing")):
        try:
            entry_point.run(uri, "packed.py", [])
        except ValueError as err:
            refused[uri[:5]] = [err.field, err.fix]
    open(os.path.join(os.environ["SAGEMAKER_BASE_DIR"], "code", "setup.py"), "w").write("")
    try:
        entry_point.install("packed.py", os.path.join(os.environ["SAGEMAKER_BASE_DIR"], "code"))
    except ValueError as err:
        refused["package"] = [err.field, err.fix]
    print(json.dumps(refused))
    """)


def test_entry_point_unpacks_an_archive_and_refuses_what_a_local_job_cannot_do(tmp_path):
    """Without a job process: the stand-in on PYTHONPATH, the job's base folder given as the backend gives it."""
    from sagelaunch.launcher.local.job_modules import JOB_MODULES_ROOT

    base = tmp_path / "algo-1"
    (base / "code").mkdir(parents=True)
    env = {**os.environ, "SAGEMAKER_BASE_DIR": str(base),
           "PYTHONPATH": os.pathsep.join([str(JOB_MODULES_ROOT / "sagemaker_training"), os.getcwd()])}
    out = subprocess.run([sys.executable, "-c", UNPACK, str(tmp_path)], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert "unpacked --n 1" in lines and (base / "code" / "packed.py").is_file()
    refused = json.loads(lines[-1])
    assert refused["s3://"][0] == "uri" and "module_dir" in refused["s3://"][1]
    assert refused[str(tmp_path)[:5]][0] == "uri"
    assert refused["package"][0] == "user_entry_point" and "requirements.txt" in refused["package"][1]
