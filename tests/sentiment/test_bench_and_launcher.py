"""The benchmark keeps working (tiny size, CPU), and the README's main job builds the right estimator."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO_ROOT / "scripts"))

import launch_local_finetune  # noqa: E402


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
    variants = [r["variant"] for r in report["results"]]
    assert variants == ["eager fp32 + AdamW", "torch.compile + bf16 + fused AdamW"]
    for r in report["results"]:
        assert r["samples_per_s"] > 0 and 0 < r["mfu"] < 1 and math.isfinite(r["loss"])
    assert report["speedup"] == report["results"][1]["samples_per_s"] / report["results"][0]["samples_per_s"]
    assert f"speed-up: {report['speedup']:.2f}x" in done.stdout and "MFU" in done.stdout


def test_main_job_is_a_profiled_local_pytorch_estimator(tmp_path):
    ns = argparse.Namespace(model="tiny-roberta", epochs=8, max_train_samples=None, instance_type="local",
                            output_path=str(tmp_path), profile_seconds=60)
    estimator = launch_local_finetune.build_estimator(ns)
    spec = estimator.to_spec(inputs=launch_local_finetune.channels())
    assert spec.is_local and spec.entry_point == "train_sentiment.py"
    assert Path(spec.source_dir) == REPO_ROOT / "scripts"
    assert spec.hyperparameters == {"model_name_or_path": "tiny-roberta", "epochs": 8}
    assert spec.profiler is not None and not spec.profiler.disable_profiler
    assert spec.profiler.system_monitor_interval_millis == 500 and spec.profiler.cpu_profiling_duration == 60
    channels = {c.name: c.uri for c in spec.inputs}
    assert sorted(channels) == ["test", "train", "validation"]
    assert all(Path(uri.removeprefix("file://")).is_file() for uri in channels.values())
    assert spec.output_path == str(tmp_path)
