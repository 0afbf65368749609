"""A local endpoint lives as long as the process that deployed it, unless it was asked to detach.

A real owner process deploys tests/data/serving/echo_model and then exits or is killed with SIGKILL; the
server, its temporary folder and its registry record must be gone. A detached one outlives its owner until
`sagelaunch endpoints stop NAME`. Waits poll with a deadline.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sagelaunch.launcher.local.serving import endpoint_registry
from sagelaunch.launcher.local.serving.endpoint import LocalEndpoint

REPO_ROOT = Path(__file__).resolve().parents[2]
ECHO_MODEL = REPO_ROOT / "tests" / "data" / "serving" / "echo_model"
DEADLINE_S = 60.0
OWNER = """
import json, os, sys
from sagelaunch.launcher.local.serving.endpoint import LocalEndpoint
endpoint = LocalEndpoint(sys.argv[1], sys.argv[2]).start()
child = os.fork() if sys.argv[3] == "fork" else None  # like a DataLoader worker: it inherits the pipe's write end
if child == 0:
    sys.stdin.read()
    os._exit(0)
print(json.dumps({"url": endpoint.url, "pid": endpoint.process.pid, "workdir": str(endpoint.workdir),
                  "child": child}), flush=True)
if sys.argv[3] != "exit":
    sys.stdin.read()  # until killed
"""


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def start_owner(name: str, then: str, env: dict | None = None) -> tuple[subprocess.Popen, dict]:
    """An owner process that deploys the echo model and prints what it started."""
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), **(env or {}))
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(ECHO_MODEL), name, then], env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = owner.stdout.readline()
    assert line, f"the owner process failed to deploy (exit code {owner.poll()})"
    return owner, json.loads(line)


def ping(url: str) -> int:
    with urllib.request.urlopen(f"{url}/ping", timeout=10) as answer:
        return answer.status


def wait_gone(pid: int, workdir: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline and (endpoint_registry.process_start_time(pid) or Path(workdir).exists()):
        time.sleep(0.05)
    assert endpoint_registry.process_start_time(pid) is None, f"server pid {pid} still runs after its owner"
    assert not Path(workdir).exists(), f"{workdir} was left behind"


@pytest.mark.parametrize("how", ["exit", "kill -9", "kill -9, a forked child alive"])
def test_the_server_ends_with_its_owner(home, how):
    """A forked child keeps the pipe open: the server also sees that its parent changed."""
    owner, started = start_owner("owned", {"exit": "exit", "kill -9": "wait"}.get(how, "fork"))
    try:
        if how != "exit":
            assert ping(started["url"]) == 200 and [r.name for r in endpoint_registry.live_endpoints()] == ["owned"]
            owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=DEADLINE_S)
        wait_gone(started["pid"], started["workdir"])
        assert endpoint_registry.live_endpoints() == [] and list((home / "endpoints").glob("*.json")) == []
    finally:
        owner.kill()
        owner.wait()
        if started.get("child"):
            os.kill(started["child"], signal.SIGKILL)


def test_a_detached_endpoint_outlives_its_owner_and_is_listed_and_stopped_by_the_cli(home):
    from sagelaunch.cli import app

    owner, started = start_owner("kept", "exit", env={"SAGELAUNCH_DETACH_ENDPOINTS": "1"})
    try:
        assert owner.wait(timeout=DEADLINE_S) == 0
        assert ping(started["url"]) == 200  # the owner is gone, the endpoint serves
        listed = CliRunner().invoke(app, ["endpoints", "list", "--json"])
        assert listed.exit_code == 0, listed.output
        [record] = json.loads(listed.output)
        assert (record["name"], record["url"], record["pid"], record["detached"]) == (
            "kept", started["url"], started["pid"], True)
        table = CliRunner().invoke(app, ["endpoints", "list"])
        assert "kept" in table.output and "detached" in table.output
        stopped = CliRunner().invoke(app, ["endpoints", "stop", "kept"])
        assert stopped.exit_code == 0 and "Stopped kept" in stopped.output
        wait_gone(started["pid"], started["workdir"])
        assert json.loads(CliRunner().invoke(app, ["endpoints", "list", "--json"]).output) == []
        again = CliRunner().invoke(app, ["endpoints", "stop", "kept"])
        assert again.exit_code == 1 and "no running local endpoint named 'kept'" in again.output
    finally:
        if endpoint_registry.find("kept"):
            endpoint_registry.stop("kept")


def test_a_bad_detach_value_is_refused_by_name(home, monkeypatch):
    monkeypatch.setenv("SAGELAUNCH_DETACH_ENDPOINTS", "maybe")
    with pytest.raises(ValueError, match="SAGELAUNCH_DETACH_ENDPOINTS='maybe' is not a yes/no value"):
        LocalEndpoint(ECHO_MODEL, "x")


def test_a_name_already_served_is_refused(home):
    first = LocalEndpoint(ECHO_MODEL, "twice").start()
    try:
        with pytest.raises(ValueError, match=r"endpoint_name='twice' is already served at http://127\.0\.0\.1:"):
            LocalEndpoint(ECHO_MODEL, "twice").start()
        assert ping(first.url) == 200
    finally:
        first.stop()


def test_a_relative_model_folder_is_resolved_against_the_callers_directory(home, monkeypatch):
    monkeypatch.chdir(ECHO_MODEL.parent)
    endpoint = LocalEndpoint("echo_model", "relative").start()
    try:
        assert endpoint.invoke(b'{"served": "echo"}')[:2] == (200, b'{"served": "echo"}')
    finally:
        endpoint.stop()


def test_a_missing_model_folder_is_an_error_naming_it(home, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=rf"model_data='no_such_model' does not exist \(resolved against the current "
                                         rf"directory {tmp_path}\)"):
        LocalEndpoint("no_such_model", "missing").start()


def test_a_folder_that_is_no_model_is_an_error_not_the_default_handler(home, tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "readme.txt").write_text("not a model")
    with pytest.raises(RuntimeError, match=r"exited with code 1 while loading the model:\nerror: model folder "
                                           rf"{tmp_path / 'notes'}: "):
        LocalEndpoint(tmp_path / "notes", "not-a-model").start()
    assert endpoint_registry.live_endpoints() == []


def test_the_server_refuses_a_model_folder_that_does_not_exist(tmp_path):
    from sagelaunch.launcher.local.serving.server import main

    with pytest.raises(SystemExit) as exited:
        main(["--model-dir", str(tmp_path / "gone"), "--port", "0"])
    assert exited.value.code == 1


def test_session_delete_endpoint_stops_a_detached_endpoint_of_another_process(home):
    import boto3

    from sagelaunch.estimators import Session

    owner, started = start_owner("by-session", "exit", env={"SAGELAUNCH_DETACH_ENDPOINTS": "1"})
    try:
        assert owner.wait(timeout=DEADLINE_S) == 0 and ping(started["url"]) == 200
        Session(boto3.Session(region_name="us-east-1")).delete_endpoint("by-session")  # v2's call, as a notebook's clean-up cell makes it
        wait_gone(started["pid"], started["workdir"])
        assert endpoint_registry.live_endpoints() == []
    finally:
        if endpoint_registry.find("by-session"):
            endpoint_registry.stop("by-session")
