"""scripts/bench_modelparallel.py keeps working (tiny sizes; its figures are printed, never asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.modelparallel.launch import first_failure

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # starts torchrun


@pytest.mark.timeout(180)
def test_benchmark_runs_at_a_tiny_size(_launches):
    # _launches: the area's torchrun launches start first and run alongside (their ranks mostly wait)
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "bench_modelparallel.py"), "--quick"],
                          capture_output=True, text=True, timeout=170, cwd=REPO,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, first_failure(done.stderr) + "\n…\n" + done.stderr[-2000:]
    for line in ("1. optimizer state per rank", "2. activations kept for backward", "3. step time", "tp2:", "pp2:"):
        assert line in done.stdout, done.stdout
