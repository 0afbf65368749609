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
