"""`python -m sagelaunch.profiler.monitor` as the local backend runs it: samples per core, rotates, stops on SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil

from sagelaunch.profiler.loader import load_profile
from tests.profiler.conftest import REPO, analysis_json


def test_sidecar_samples_rotates_and_stops_on_sigterm(tmp_path):
    cfg = tmp_path / "profilerconfig.json"
    cfg.write_text(json.dumps({"ProfilingIntervalInMilliseconds": 50, "DisableProfiler": False,
                               "ProfilingParameters": {"CPUProfilingDuration": "60", "SMPFileRotationSecs": "1"}}))
    out = tmp_path / "profiler"
    proc = subprocess.Popen([sys.executable, "-m", "sagelaunch.profiler.monitor", "--config", str(cfg), "--out", str(out),
                             "--host", "algo-1"], env={**os.environ, "PYTHONPATH": str(REPO)},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (out / "algo-1" / "system-0001.parquet").exists():  # the first window rotated out
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "no rotated system file within 60 s"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGTERM)
        output = proc.communicate(timeout=30)[0]
    assert proc.returncode == 0, output
    assert "wrote" in output
    profile = load_profile(out)
    counters = profile.counters.to_pandas()
    cpu = counters[counters["metric"] == "cpu_util"]
    assert sorted(cpu["index"].unique()) == list(range(psutil.cpu_count()))
    assert cpu["value"].between(0, 100).all() and len(cpu) >= 2 * psutil.cpu_count()
    assert (counters["host"] == "algo-1").all()
    host = analysis_json(profile)["hosts"]["algo-1"]
    assert set(host["metrics"]) >= {"cpu_util", "host_mem_util"}
    assert set(host["metrics"]["cpu_util"]["series"]) == {str(i) for i in range(psutil.cpu_count())}


def test_sidecar_respects_disable_profiler(tmp_path):
    cfg = tmp_path / "profilerconfig.json"
    cfg.write_text(json.dumps({"ProfilingIntervalInMilliseconds": 50, "DisableProfiler": True}))
    proc = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.monitor", "--config", str(cfg), "--out",
                           str(tmp_path / "p"), "--host", "algo-1"], env={**os.environ, "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "DisableProfiler" in proc.stdout
    assert not (tmp_path / "p").exists()
