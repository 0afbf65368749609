"""`sagelaunch profile ui` as a real process: it listens on 127.0.0.1 only and serves the job list."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAUNCH = "import sys; from sagelaunch.cli import app; sys.argv[0] = 'sagelaunch'; app()"


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
        status: dict = {}
        for _ in range(600):  # each request waits on the server; the load takes well under a second here
            with urllib.request.urlopen(url + "api/status", timeout=10) as resp:
                status = json.loads(resp.read())
            if status["state"] not in ("loading", "empty"):
                break
        assert status["state"] == "loaded" and status["job"]["source"] == "path", status
        assert status["job"]["name"] == trace.name
        with urllib.request.urlopen(url + "api/dashboard", timeout=10) as resp:
            dash = json.loads(resp.read())
        assert dash["figures"] and "findings" in dash
        with urllib.request.urlopen(url + "api/jobs", timeout=10) as resp:
            assert "profui-resnet-v100" in [j["name"] for j in json.loads(resp.read())["jobs"]]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_ui_command_rejects_a_missing_path(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", LAUNCH, "profile", "ui", str(tmp_path / "nope.json"), "--port", "0"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "no such file or folder" in out.stderr and "Traceback" not in out.stderr
