"""`sagelaunch profile ui` as a real process: it listens on 127.0.0.1 only and serves the job list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = "import sys; from sagelaunch.cli import app; sys.argv[0] = 'sagelaunch'; app()"


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return json.loads(resp.read())


def wait_for_load(proc: subprocess.Popen, url: str, deadline_s: float = 180.0) -> dict:
    """Poll /api/status until the load ends: the pause between polls doubles from 20 ms to at most 1 s, and is
    spent waiting on the server process, so a server that dies ends the wait at once with its output."""
    end = time.monotonic() + deadline_s
    pause = 0.02
    while True:
        status = get_json(url + "api/status")
        if status["state"] not in ("loading", "empty"):
            return status
        left = end - time.monotonic()
        if left <= 0:
            raise AssertionError(f"the profile did not load within {deadline_s:.0f} s: {status}")
        try:
            proc.wait(timeout=min(pause, left))
        except subprocess.TimeoutExpired:
            pause = min(2 * pause, 1.0)
            continue
        raise AssertionError(f"the server exited ({proc.returncode}) while loading: {proc.stdout.read()}")


def test_ui_command_serves_on_loopback(profile_home):
    env = {**os.environ, "SAGELAUNCH_HOME": str(profile_home["home"]), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, "profile", "ui", "--port", "0", "--no-sagemaker"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()  # the first line names the URL; readline returns at EOF if it died
        assert "http://127.0.0.1:" in line and "127.0.0.1 only" in line, line
        url = line.split(" on ", 1)[1].split(" ", 1)[0]
        # the socket is bound before the line is printed, so the first request is answered
        with urllib.request.urlopen(url + "api/jobs?q=v100", timeout=10) as resp:
            data = json.loads(resp.read())
        assert [j["name"] for j in data["jobs"]] == ["profui-resnet-v100"]
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert b"sagelaunch profiles" in resp.read()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_ui_command_opens_a_given_trace(profile_home):
    """`sagelaunch profile ui PATH`: the given trace is loaded at start, besides the job list."""
    trace = ROOT / "tests" / "data" / "traces" / "mi250_rocm.pt.trace.json.gz"
    env = {**os.environ, "SAGELAUNCH_HOME": str(profile_home["home"]), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", LAUNCH, "profile", "ui", str(trace), "--port", "0", "--no-sagemaker"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        url = line.split(" on ", 1)[1].split(" ", 1)[0]
        status = wait_for_load(proc, url)
        assert status["state"] == "loaded" and status["job"]["source"] == "path", status
        assert status["job"]["name"] == trace.name
        dash = get_json(url + "api/dashboard")
        assert dash["figures"] and "findings" in dash
        names = [(j["name"], j["source"]) for j in get_json(url + "api/jobs")["jobs"]]
        assert names[0] == (trace.name, "path") and ("profui-resnet-v100", "local") in names
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_ui_command_rejects_a_missing_path(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", LAUNCH, "profile", "ui", str(tmp_path / "nope.json"), "--port", "0"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "no such file or folder" in out.stderr and "Traceback" not in out.stderr
