"""The overhead benchmark runs at its smallest size, and its figures come from the runs it names."""

from __future__ import annotations

import importlib.util
import statistics
from pathlib import Path

import pytest

from sagelaunch.launcher.local import registry

pytestmark = pytest.mark.slow  # runs local jobs and torchrun


def test_bench_local_overhead_times_real_two_process_runs(capsys, tmp_path, monkeypatch):
    path = Path(__file__).resolve().parents[2] / "scripts" / "bench_local_overhead.py"
    spec = importlib.util.spec_from_file_location("bench_local_overhead", path)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    home = tmp_path / "bench-home"
    result = bench.main(["--repeats", "2", "--home", str(home)])
    out = capsys.readouterr().out
    fits = [r for r in result["runs"] if r["kind"] == "fit"]
    torchruns = [r for r in result["runs"] if r["kind"] == "torchrun"]
    assert len(fits) == len(torchruns) == 2
    assert all(r["status"] == "exit 0" and r["ranks"] == [0, 1] for r in torchruns)  # both ranks ran, each time
    monkeypatch.setenv("SAGELAUNCH_HOME", str(home))
    for run in fits:  # each timed fit() is a real job of the registry, Completed, with its two ranks
        record = registry.get(run["job"])
        assert record["TrainingJobStatus"] == run["status"] == "Completed" and run["ranks"] == [0, 1]
        lifetime = (record["TrainingEndTime"] - record["CreationTime"]).total_seconds()
        assert 0 < lifetime <= run["seconds"]  # the time covers the job's whole life in the registry
        assert f"{run['job']}" in out and f"{run['seconds']:.2f} s" in out
    assert result["fit"] == statistics.median(r["seconds"] for r in fits)
    assert result["torchrun"] == statistics.median(r["seconds"] for r in torchruns)
    assert f"overhead ratio fit/torchrun  : {result['fit'] / result['torchrun']:.3f}" in out
