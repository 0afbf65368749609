"""A job's processes end with its supervisor, even one killed with SIGKILL; whoever finds survivors ends them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from sagelaunch.jobspec.contract import TERMINAL_STATUSES
from sagelaunch.launcher.local import registry
from sagelaunch.launcher.backends import submit
from tests.local.conftest import SCRIPTS, make_spec, pids_in, survivors, unique, wait_for_files

REPO = Path(__file__).resolve().parents[2]
DEADLINE = 120  # generous: a loaded 2-core machine


def _cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "sagelaunch.cli", *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=DEADLINE)


def _until(condition, what: str):
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what} not within {DEADLINE} s")


def _tree(pid: int) -> list[int]:
    return [pid, *(child.pid for child in psutil.Process(pid).children(recursive=True))]


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
    _until(lambda: not survivors([pid]), f"the end of {pid}")


@pytest.mark.slow
def test_killing_the_supervisor_of_a_no_wait_fit_ends_torchrun_and_ranks(tmp_path):
    """`sagelaunch fit JOB.yaml --no-wait`, 2 ranks holding, then `kill -9` the supervisor: nothing survives,
    and the job is Failed with the reason before anyone asks (`jobs list` shows it)."""
    name = unique("sup-kill")
    job_file = tmp_path / "job.yaml"
    job_file.write_text(json.dumps({
        "framework": "pytorch", "framework_version": "2.8.0", "py_version": "py312", "instance_type": "local",
        "instance_count": 2, "entry_point": "hold.py", "source_dir": str(SCRIPTS), "job_name": name,
        "role": "arn:aws:iam::123456789012:role/R",
        # a distribution: torchrun on each host (without one each host runs the script itself)
        "distribution": {"torch_distributed": {"enabled": True}},
        "hyperparameters": {"pid_dir": str(tmp_path), "hold_seconds": 600}}))
    started = _cli("fit", str(job_file), "--no-wait")
    assert started.returncode == 0, started.stdout + started.stderr
    wait_for_files(tmp_path, 2, timeout=DEADLINE)
    supervisor = _until(lambda: registry.supervisor(name), "the supervisor's record")[0]
    tree = _tree(supervisor)  # supervisor, a torchrun per host, a rank under each
    ranks = pids_in(tmp_path)
    assert set(ranks) <= set(tree) and len(tree) >= 5

    _kill(supervisor)
    _until(lambda: not survivors(tree + ranks), "the end of torchrun and both ranks")
    record = _until(lambda: (r := registry.get(name))["TrainingJobStatus"] in TERMINAL_STATUSES and r,
                    "a final status")
    assert record["TrainingJobStatus"] == "Failed"
    assert record["FailureReason"].startswith("InternalServerError: the job's supervisor process was killed by "
                                              "SIGKILL before the job ended; sagelaunch ended the ")
    listed = _cli("jobs", "list", "--backend", "local", "--json")
    assert {"Name": name, "Status": "Failed"}.items() <= next(r for r in json.loads(listed.stdout)
                                                             if r["Name"] == name).items()


@pytest.mark.slow
@pytest.mark.parametrize("command", ["list", "describe", "stop"])
def test_survivors_of_a_dead_supervisor_and_watchdog_are_ended_by_the_next_command(tmp_path, command):
    """Supervisor and its watchdog both killed: torchrun and the ranks live on (re-parented to init) until
    `jobs list`, `describe` or `stop` finds the job unwatched — it ends them from the registry's record."""
    spec = make_spec("hold.py", processes_per_host=2, hyperparameters={"pid_dir": str(tmp_path), "hold_seconds": 600})
    job = submit(spec, wait=False)
    wait_for_files(tmp_path, 2, timeout=DEADLINE)
    ranks = pids_in(tmp_path)
    recorded = lambda: {pid for pid, _, _ in registry.processes(spec.job_name)}  # noqa: E731
    _until(lambda: set(ranks) <= recorded(), "the ranks in the registry's record")
    supervisor = registry.supervisor(spec.job_name)[0]
    tree = _tree(supervisor)
    _kill(registry.watchdog(spec.job_name)[0])
    job._process.wait(timeout=DEADLINE)  # reap it: a zombie of ours is a dead watchdog too
    _kill(supervisor)
    assert survivors(ranks), "the ranks should still run: nobody has looked at the job yet"
    assert registry.get(spec.job_name)["TrainingJobStatus"] == "InProgress"

    answer = _cli("jobs", command, spec.job_name) if command != "list" else _cli("jobs", "list", "--backend", "local")
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert not survivors(tree + ranks)
    record = registry.get(spec.job_name)
    assert record["TrainingJobStatus"] == "Failed"
    assert record["FailureReason"].startswith("InternalServerError: the job's supervisor process ended unexpectedly; "
                                              "sagelaunch ended the ")


def test_a_registry_from_before_the_watchdog_gains_its_columns(tmp_path, monkeypatch):
    import sqlite3

    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path))
    with sqlite3.connect(tmp_path / "registry.db") as old:  # the first release's schema
        old.execute("CREATE TABLE jobs (name TEXT PRIMARY KEY, status TEXT NOT NULL, created TEXT NOT NULL, "
                    "record TEXT NOT NULL, supervisor_pid INTEGER, supervisor_started REAL)")
        old.execute("INSERT INTO jobs VALUES ('old-job', 'Completed', '2026-01-01T00:00:00+00:00', "
                    "'{\"TrainingJobName\": \"old-job\", \"TrainingJobStatus\": \"Completed\"}', 1, 2.0)")
    assert registry.watchdog("old-job") is None and registry.processes("old-job") == []
    registry.set_processes("old-job", [(10, 1.5, 10)])
    assert registry.processes("old-job") == [(10, 1.5, 10)] and registry.supervisor("old-job") == (1, 2.0)
