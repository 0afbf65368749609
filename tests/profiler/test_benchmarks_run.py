"""The profiler benchmarks still run (tiny sizes; their figures are printed, never asserted)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.profiler.conftest import REPO, TRACES


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def test_analysis_benchmark_runs():
    proc = run("scripts/bench_profiler_analysis.py", str(TRACES / "alexnet.pt.trace.json.gz"), "--repeat", "1",
               "--hta-python", "/nonexistent/python")
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("alexnet.pt.trace.json.gz")]
    # the cold, warm and CLI runs of the named trace all ran and succeeded (rc column); no HTA: no ratios
    assert [r[1:3] for r in rows] == [["ours", "cold"], ["ours", "warm"], ["sagelaunch", "CLI"]], proc.stdout
    assert all(r[-1] == "0" and float(r[-4]) > 0 for r in rows), proc.stdout


def test_overhead_benchmark_runs():
    proc = run("scripts/bench_profiler_overhead.py", "--tiny", "--rounds", "1", "--steps", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {line.split("  ")[0]: line for line in proc.stdout.splitlines()}
    assert {"unprofiled", "ours (default)", "ours (+cpu ops)", "torch.profiler"} <= set(rows)
    assert "x" in rows["ours (default)"] and "cost model" in proc.stdout
