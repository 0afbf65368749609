"""One local endpoint per name (issue 32): two processes deploying one endpoint_name at the same moment never both
start — one serves, the other is refused by name; `endpoints list` shows the one, and `endpoints stop` ends it
(no server is left). Real processes, the real server, tests/data/serving/echo_model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from sagelaunch.launcher.local.serving import endpoint_registry

REPO_ROOT = Path(__file__).resolve().parents[2]
ECHO_MODEL = REPO_ROOT / "tests" / "data" / "serving" / "echo_model"
DEPLOYER = """
import json, sys, time
from pathlib import Path
from sagelaunch.launcher.local.serving.endpoint import LocalEndpoint
while not Path(sys.argv[2]).exists():
    time.sleep(0.005)
try:
    endpoint = LocalEndpoint(sys.argv[1], "raced", detach=True).start()
    print(json.dumps({"url": endpoint.url, "pid": endpoint.process.pid}), flush=True)
except ValueError as error:
    print(json.dumps({"refused": str(error)}), flush=True)
"""


@pytest.mark.slow
def test_two_deploys_of_one_name_at_once_start_one_server(tmp_path, monkeypatch):
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    go = tmp_path / "go"
    deployers = [subprocess.Popen([sys.executable, "-c", DEPLOYER, str(ECHO_MODEL), str(go)], stdout=subprocess.PIPE,
                                  text=True, env=dict(os.environ)) for _ in range(2)]
    time.sleep(1.0)  # both waiting at the line
    go.touch()
    outcomes = [json.loads(d.communicate(timeout=180)[0].strip().splitlines()[-1]) for d in deployers]
    served = [o for o in outcomes if "url" in o]
    refused = [o for o in outcomes if "refused" in o]
    try:
        assert len(served) == 1 and len(refused) == 1, outcomes
        assert refused[0]["refused"].startswith("endpoint_name='raced' is already ")
        assert [(r.name, r.url) for r in endpoint_registry.live_endpoints()] == [("raced", served[0]["url"])]
    finally:
        for outcome in served:
            if endpoint_registry.find("raced"):
                endpoint_registry.stop("raced")
            assert not psutil.pid_exists(outcome["pid"]) or psutil.Process(outcome["pid"]).status() == "zombie"
    assert endpoint_registry.live_endpoints() == []
