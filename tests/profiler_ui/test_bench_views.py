"""scripts/bench_profiler_views.py keeps working: run at its --quick size (figures printed, never asserted)."""

from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from sagelaunch.profiler.loader import load_profile
from tests.profiler_ui.conftest import TRACES

pytestmark = pytest.mark.slow  # drives Chromium (the benchmark's browser figures)

REPO = Path(__file__).resolve().parents[2]
QUICK_TRACE = "sampled_rank0.pt.trace.json.gz"  # what --quick benchmarks


def test_views_benchmark_runs_at_quick_size():
    proc = subprocess.run(
        [sys.executable, "scripts/bench_profiler_views.py", "--quick", "--traces", str(TRACES)],
        capture_output=True, text=True, timeout=300, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = {}
    for line in proc.stdout.splitlines():
        m = re.match(r"^(.+?\))\s+(-?[\d.]+|nan)\b", line)
        if m:
            rows[m.group(1)] = float(m.group(2))
    expected_events = len(load_profile(TRACES / QUICK_TRACE).ranks[0])
    assert f"UI load of {expected_events} events, server side (s)" in rows  # the UI loaded the whole profile
    for label in ("report: CLI process, sampled_rank0 (s)", "report: in-process, sampled_rank0 (s)",
                  "dashboard first paint (s)", "timeline first frame (s)",
                  "timeline frame, all events visible: mean (ms)", "timeline frame, one step: mean (ms)",
                  "timeline frame_raster, 2 ms window: p95 (ms)", "timeline payload (MB)",
                  "same data as Chrome/Perfetto JSON (MB)"):
        assert label in rows, f"{label!r} missing from:\n{proc.stdout}"
        assert math.isfinite(rows[label]) and rows[label] >= 0, (label, rows[label])
    assert rows["timeline payload (MB)"] > 0
    assert "full zoom-out frame:" in proc.stdout and f"of {expected_events} events" in proc.stdout
