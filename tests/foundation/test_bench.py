"""The estimator benchmark runs at a tiny size, and its figures are those of the runs it names."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_estimators_runs_at_a_tiny_size():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_estimators.py"), "--repeats", "1", "--jobs", "5", "--skip-sdk"],
                         capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "medians of 1 processes" in out.stdout and "median of 5 (target" in out.stdout  # the runs asked for
    found = re.search(r"import sagelaunch.estimators, sagelaunch.profiler_config\s*:\s*([\d.]+) ms import \(\s*([\d.]+) ms CPU\),\s*([\d.]+) ms "
                      r"whole process", out.stdout)
    assert found, out.stdout
    inside, cpu, whole = map(float, found.groups())
    assert 0 < inside <= whole and 0 < cpu  # timed inside a fresh process that lived at least that long
    compile_ms = re.search(r"construct \+ validate \+ compile 1 job\s*:\s*([\d.]+) ms", out.stdout)
    assert compile_ms and float(compile_ms.group(1)) > 0, out.stdout
