"""The overhead benchmark still runs (at its smallest size; its figures are never asserted)."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def test_bench_local_overhead_runs_estimator_fit_and_torchrun(capsys):
    path = Path(__file__).resolve().parents[2] / "scripts" / "bench_local_overhead.py"
    spec = importlib.util.spec_from_file_location("bench_local_overhead", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    result = bench.main(["--repeats", "1"])
    assert result["fit"] > 0 and result["torchrun"] > 0 and result["ratio"] == result["fit"] / result["torchrun"]
    assert "overhead ratio fit/torchrun" in capsys.readouterr().out
