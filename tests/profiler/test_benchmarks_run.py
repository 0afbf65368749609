"""The profiler benchmarks still run (tiny sizes; their timings are printed, never asserted)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.profiler.conftest import REPO, TRACES


def run(*args):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=300, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def test_analysis_benchmark_runs():
    proc = run("scripts/bench_profiler_analysis.py", str(TRACES / "alexnet.pt.trace.json.gz"), "--repeat", "1",
               "--hta-python", "/nonexistent/python")
    assert proc.returncode == 0, proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines()
            if line.startswith("alexnet.pt.trace.json.gz ") and not line.startswith("alexnet.pt.trace.json.gz (")]
    # the cold (also on one core, where taskset can pin it), warm, CLI, in-process and floor runs of the named trace
    # all ran and succeeded (rc column); no HTA: no ratios to HTA, but ours vs the floor
    one_core = ["ours cold, 1 core"] if shutil.which("taskset") and len(os.sched_getaffinity(0)) > 1 else []
    assert [" ".join(r[1:-4]) for r in rows] == ["ours cold", *one_core, "ours warm", "sagelaunch CLI cold",
                                                 "ours in process", "floor"], proc.stdout
    assert all(r[-1] == "0" and float(r[-4]) > 0 for r in rows), proc.stdout
    paired = [line.split() for line in proc.stdout.splitlines() if line.startswith("alexnet (")]
    assert len(paired) == 1 and paired[0][-2].endswith("x") and paired[0][-1] in ("orjson", "msgspec", "simdjson",
                                                                                 "json"), proc.stdout


def test_analysis_benchmark_phases_add_up():
    proc = run("scripts/bench_profiler_analysis.py", str(TRACES / "alexnet.pt.trace.json.gz"), "--repeat", "1",
               "--phases")
    assert proc.returncode == 0, proc.stderr
    rows = {line[:46].rstrip(): line[46:].split() for line in proc.stdout.splitlines()[2:]}
    assert {"interpreter start-up (python -c pass)", "import numpy", "read + gunzip", "JSON decode (typed msgspec)",
            "columns (typed arrays)", "analyses", "JSON output"} <= set(rows), proc.stdout
    # the phases (analyses are indented: parts of "analyses"); each printed to 0.1 ms, so their sum is within 0.05 ms
    # per row of the printed sum
    main = [k for k in rows if not k.startswith((" ", "text output", "sum of"))]
    assert abs(sum(float(rows[k][0]) for k in main) - float(rows["sum of the phases (--json)"][0])) <= 0.05 * (len(main) + 1)


@pytest.mark.slow  # trains a model with and without profilers
def test_overhead_benchmark_runs():
    proc = run("scripts/bench_profiler_overhead.py", "--tiny", "--rounds", "1", "--steps", "2")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {line.split("  ")[0]: line for line in proc.stdout.splitlines()}
    assert {"unprofiled", "ours (default)", "ours (ops all)", "ours (ops K/N)", "torch.profiler"} <= set(rows)
    assert "x" in rows["ours (default)"] and "cost model" in proc.stdout


@pytest.mark.slow
def test_capture_benchmark_runs_each_mode_in_its_own_process():
    proc = run("scripts/bench_profiler_capture.py", "--steps", "60", "--duty", "2", "20",
               "--modes", "unprofiled", "ours (ops all)", "ours (ops K/N)", "torch (sched K/N)")
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {}
    for line in proc.stdout.splitlines()[2:]:
        cells = line.split()
        rows[" ".join(cells[1:-10])] = cells[-10:]  # wall, x, x range, cpu, x, peak MB, x, x range, files, KB/step
    assert set(rows) == {"unprofiled", "ours (ops all)", "ours (ops K/N)", "torch (sched K/N)"}, proc.stdout
    # the figures come from the runs they name: every step recorded, 50 per window: two windows; 2 of every 20
    # steps: a window ends with each cycle's recorded steps (0-1, 20-21, 40-41) and the last holds steps 42-59 (4);
    # torch's schedule: a trace per cycle (3); the unprofiled run wrote nothing
    files = {mode: cells[8] for mode, cells in rows.items()}
    assert files == {"unprofiled": "0", "ours (ops all)": "2", "ours (ops K/N)": "4", "torch (sched K/N)": "3"}, proc.stdout
    assert float(rows["ours (ops K/N)"][9]) > 0 and rows["unprofiled"][1] == "1.00x", proc.stdout
