"""The estimator benchmark still runs (tiny size; its figures are printed, never asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_estimators_runs_at_a_tiny_size():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_estimators.py"), "--repeats", "1", "--jobs", "5", "--skip-sdk"],
                         capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "import estimators, profiler_config" in out.stdout
    assert "construct + validate + compile 1 job" in out.stdout
