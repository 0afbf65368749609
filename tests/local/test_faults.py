"""Faults: nothing lost, nothing left running — checked by PID."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tarfile
import threading
import time
import venv
from pathlib import Path

import pytest

from sagelaunch.launcher.local import registry
from sagelaunch.launcher.backends import submit
from sagelaunch.jobspec.net import free_port
from sagelaunch.jobspec.spec import InputChannel
from sagelaunch.launcher.backends import attach
from sagelaunch.launcher.common.jobs import JobFailedError
from sagelaunch.launcher.local.logs import rank_lines
from tests.local.conftest import job_tree, make_spec, pids_in, survivors, unique, wait_for_files

pytestmark = pytest.mark.slow  # local jobs: supervisors, torchrun, ranks

REPO = Path(__file__).resolve().parents[2]
LOADED_MACHINE_S = 180  # deadline for what takes seconds on an idle machine (as wait_for_files)


def _final_status(name: str) -> str:
    """The job's status once terminal (its supervisor may still be publishing when the client has returned)."""
    deadline = time.monotonic() + LOADED_MACHINE_S
    while (status := registry.get(name)["TrainingJobStatus"]) not in registry.TERMINAL_STATUSES:
        assert time.monotonic() < deadline, f"{name} still {status} after {LOADED_MACHINE_S} s"
        time.sleep(0.1)
    return status


def _hold_spec(pid_dir: Path, **overrides):
    hyperparameters = {"pid_dir": str(pid_dir), **overrides.pop("hyperparameters", {})}
    return make_spec("hold.py", hyperparameters=hyperparameters, **overrides)


def test_failing_rank_ends_every_process_of_every_host(tmp_path):
    spec = _hold_spec(tmp_path, instance_count=2, processes_per_host=2, hyperparameters={"fail_rank": 3})
    job = submit(spec, wait=False, stop_grace=5)
    wait_for_files(tmp_path, 4)
    tree = job_tree(spec.job_name)
    with pytest.raises(JobFailedError) as failed:
        job.wait(logs=False)
    record = job.describe()
    assert record["TrainingJobStatus"] == "Failed" and failed.value.status == "Failed"
    reason = record["FailureReason"]
    assert reason.startswith("AlgorithmError: rank 3 on algo-2 exited with code 1")
    assert "ValueError: boom from rank 3" in reason and reason == failed.value.reason
    assert not survivors(pids_in(tmp_path) + tree)
    # logs kept
    assert "rank 0 holding" in rank_lines(Path(record["JobDir"]) / "logs" / "job.log", "algo-1", 0)


def test_ranks_ignoring_sigterm_are_killed_after_the_short_failure_grace(tmp_path):
    """A rank that ignores SIGTERM, and its detached grandchild, are SIGKILLed once the failure grace is over."""
    spec = _hold_spec(tmp_path, instance_count=2, processes_per_host=1,
                      hyperparameters={"fail_rank": 1, "stubborn_rank": 0})
    job = submit(spec, wait=False)  # the default stop_grace (10 s) is for user stops only
    wait_for_files(tmp_path, 3)
    tree = job_tree(spec.job_name)
    stubborn = [int(tmp_path.joinpath(f).read_text()) for f in ("algo-1-rank0.pid", "algo-1-rank0-grandchild.pid")]
    with pytest.raises(JobFailedError, match="rank 1 on algo-2 exited with code 1"):
        job.wait(logs=False)
    assert not survivors(pids_in(tmp_path) + tree)
    kill_line = next(line for line in job.logs() if "SIGKILL to" in line)
    # torchrun SIGKILLs its own stubborn worker after TORCH_ELASTIC_SHUTDOWN_TIMEOUT; the detached
    # grandchild escapes torchrun and is ours to kill
    assert "3 s after SIGTERM" in kill_line and str(stubborn[1]) in kill_line


def test_failure_file_and_exit_code_make_the_reason(tmp_path):
    spec = _hold_spec(tmp_path, processes_per_host=2,
                      hyperparameters={"fail_rank": 0, "exit_code": 3, "failure_file": "'simulated out of memory'"})  # quoted: the toolkit's shell splits at spaces
    with pytest.raises(JobFailedError, match="simulated out of memory"):
        submit(spec, wait=True, logs=False, stop_grace=5)
    reason = registry.get(spec.job_name)["FailureReason"]
    assert reason == "AlgorithmError: rank 0 on algo-1 exited with code 3: simulated out of memory"
    assert not survivors(pids_in(tmp_path))


def test_stop_ends_every_process_and_keeps_partial_outputs(tmp_path):
    spec = _hold_spec(tmp_path, instance_count=2, processes_per_host=1)
    job = submit(spec, wait=False)
    followed: list[str] = []  # another handle follows the logs live, as `sagelaunch jobs logs --follow` does
    follower = threading.Thread(target=lambda: followed.extend(attach(spec.job_name).logs(follow=True)))
    follower.start()
    wait_for_files(tmp_path, 2)
    tree = job_tree(spec.job_name)
    job.stop()
    record = job.wait(logs=False)  # a stop the user asked for is not an error
    assert record["TrainingJobStatus"] == "Stopped" and record["SecondaryStatus"] == "Stopped"
    assert not survivors(pids_in(tmp_path) + tree)
    follower.join(timeout=LOADED_MACHINE_S)
    assert not follower.is_alive()  # following ends with the job
    assert "[algo-2 rank1] rank 1 holding" in followed and followed[-1] == f"[sagelaunch] job {spec.job_name} Stopped"
    assert "rank 1 holding" in "\n".join(job.logs())
    assert tarfile.is_tarfile(record["ModelArtifacts"]["S3ModelArtifacts"])


def test_ctrl_c_in_the_submitting_process_stops_the_job(tmp_path):
    spec = _hold_spec(tmp_path / "pids", processes_per_host=2)
    (tmp_path / "pids").mkdir()
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(spec.model_dump_json())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    client = subprocess.Popen([sys.executable, str(Path(__file__).with_name("client_submit.py")), str(spec_file)],
                              cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    streaming = threading.Event()  # the client prints the ranks' lines live: it is inside wait()

    def read() -> None:
        for line in iter(client.stdout.readline, ""):
            lines.append(line)
            if "[algo-1 rank1] rank 1 holding" in line:
                streaming.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        wait_for_files(tmp_path / "pids", 2)
        tree = job_tree(spec.job_name)
        assert streaming.wait(LOADED_MACHINE_S), "".join(lines)
        client.send_signal(signal.SIGINT)
        # the client stops the job and waits for it to end (at most its stop grace + 30 s), then re-raises
        client.wait(timeout=LOADED_MACHINE_S)
        reader.join(timeout=LOADED_MACHINE_S)
    finally:
        client.kill()
    assert client.returncode != 0 and "KeyboardInterrupt" in "".join(lines)
    assert _final_status(spec.job_name) == "Stopped"
    assert not survivors(pids_in(tmp_path / "pids") + tree + [client.pid])


def test_max_run_stops_the_job(tmp_path):
    spec = _hold_spec(tmp_path, max_run=2)
    started = time.monotonic()
    with pytest.raises(JobFailedError) as failed:
        submit(spec, wait=True, logs=False, stop_grace=5)
    assert time.monotonic() - started < 110  # below the script's 120 s hold: max_run ended it
    record = registry.get(spec.job_name)
    assert record["TrainingJobStatus"] == "Stopped" and record["SecondaryStatus"] == "MaxRuntimeExceeded"
    assert failed.value.status == "MaxRuntimeExceeded" and "max_run=2" in record["FailureReason"]
    assert not survivors(pids_in(tmp_path))


def _rejected_before_start(spec, match: str, **options) -> None:
    with pytest.raises(ValueError, match=match):
        submit(spec, wait=False, **options)
    assert not registry.exists(spec.job_name)
    assert not registry.job_dir(spec.job_name).exists()


def test_bad_input_is_rejected_before_any_process_starts(tmp_path, moto_server):
    _rejected_before_start(make_spec("contract_prob.py"), r"entry_point 'contract_prob.py'.*did you mean 'contract_probe.py'")
    _rejected_before_start(make_spec(source_dir=None, entry_point=str(tmp_path / "train.py")), "does not exist")
    _rejected_before_start(make_spec(inputs=(InputChannel(name="train", uri=str(tmp_path / "missing")),)),
                           r"inputs\['train'\].*does not exist")
    # paths that exist for os.access (which says yes to root) but cannot be read, even by root
    import socket

    with socket.socket(socket.AF_UNIX) as unix:
        unix.bind(str(tmp_path / "channel.sock"))
        _rejected_before_start(make_spec(inputs=(InputChannel(name="train", uri=str(tmp_path / "channel.sock")),)),
                               r"inputs\['train'\].*neither a folder nor a regular file")
    (tmp_path / "plain-file").write_text("x")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    for unreadable in (tmp_path / "plain-file" / "sub", tmp_path / "dangling"):
        _rejected_before_start(make_spec(inputs=(InputChannel(name="train", uri=str(unreadable)),)),
                               r"inputs\['train'\].*(does not exist|cannot be read)")
    _rejected_before_start(make_spec(inputs=(InputChannel(name="train", uri=f"s3://{unique('absent')}/x"),)),
                           r"inputs\['train'\]: cannot list")
    _rejected_before_start(make_spec(inputs=(InputChannel(name="train", uri=str(tmp_path), input_mode="Pipe"),)),
                           "Pipe")
    port = free_port()
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", port))
        busy.listen()
        _rejected_before_start(make_spec(), f"master_port={port}: the port is in use", master_port=port)
    _rejected_before_start(make_spec(), "did you mean 'stop_grace'", stop_grace_period=3)
    # an interpreter without torch
    bare = tmp_path / "bare-venv"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(bare)
    _rejected_before_start(make_spec(), "torch is not installed", python=str(bare / "bin" / "python"))
    # a name already taken
    taken = make_spec()
    submit(taken, wait=True, logs=False)
    with pytest.raises(ValueError, match="already exists"):
        submit(taken, wait=False)
