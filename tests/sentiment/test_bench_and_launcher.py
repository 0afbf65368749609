"""The benchmark keeps working (tiny size, CPU), and the README's main job builds the right estimator."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "scripts"))

import launch_local_finetune  # noqa: E402


@pytest.mark.slow  # trains two RoBERTa variants
def test_bench_roberta_runs_both_variants_side_by_side(tmp_path):
    """Tiny size on CPU; the aot_eager backend keeps torch.compile in the loop without minutes of C++ codegen."""
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "bench_roberta.py"), "--size", "tiny", "--steps", "3",
         "--compile-backend", "aot_eager", "--peak-tflops", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=240, env=dict(os.environ, OMP_NUM_THREADS="1"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    eager, optimized = report["results"]
    assert [eager["variant"], optimized["variant"]] == ["eager fp32 + AdamW", "torch.compile + bf16 + fused AdamW"]
    for r in (eager, optimized):  # each figure comes from a run that took the steps it claims
        assert r["optimizer_steps"] == 2 + 3  # warm-up + timed, counted by AdamW itself
        assert r["samples_per_s"] == pytest.approx(3 * report["batch"] / r["elapsed_s"])
        assert 0 < r["mfu"] < 1 and math.isfinite(r["loss"])
    # the runs are what they are named: eager fp32 without compilation, the other compiled, bf16, fused
    assert (eager["compiled_graphs"], eager["logits_dtype"], eager["fused_adamw"]) == (0, "torch.float32", False)
    assert optimized["compiled_graphs"] >= 1 and optimized["logits_dtype"] == "torch.bfloat16"
    assert optimized["fused_adamw"] is True
    assert optimized["first_loss"] == pytest.approx(eager["first_loss"], abs=0.05)  # same model, same batch
    assert f"speed-up: {report['speedup']:.2f}x" in done.stdout and "5 optimizer steps" in done.stdout


def test_main_job_is_a_profiled_local_pytorch_estimator(tmp_path):
    ns = argparse.Namespace(model="tiny-roberta", epochs=8, max_train_samples=None, instance_type="local",
                            output_path=str(tmp_path), profile_seconds=60)
    estimator = launch_local_finetune.build_estimator(ns)
    spec = estimator.to_spec(inputs=launch_local_finetune.channels())
    assert spec.is_local and spec.code.entry_point == "train_sentiment.py"
    assert Path(spec.code.source_dir) == REPO_ROOT / "scripts"
    assert spec.code.hyperparameters == {"model_name_or_path": "tiny-roberta", "epochs": 8}
    assert spec.observability.profiler is not None and not spec.observability.profiler.disable_profiler
    assert spec.observability.profiler.detailed and spec.observability.profiler.cpu_profiling_duration == 60
    channels = {c.name: c.uri for c in spec.inputs}
    assert sorted(channels) == ["test", "train", "validation"]
    assert all(Path(uri.removeprefix("file://")).is_file() for uri in channels.values())
    assert spec.output.output_path == str(tmp_path)
