"""`import smppy` / `import smprof` in a local job are sagelaunch's profiler: AWS's own SageMaker Profiler test script
(aws/deep-learning-containers' mnist_smppy.py, vendored) runs as a local TensorFlow job and writes a profile that
`sagelaunch profile analyze` reads; smppy's native Config.profiler options are mapped or named, never dropped."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest

from sagelaunch.profiler.settings import Config

DLC_SCRIPT = Path(__file__).parents[1] / "data" / "dlc_profiler" / "mnist_smppy.py"
RAW_FILE_CHECK = 'smp_files = glob.glob("/opt/ml/output/profiler/framework/*.smpraw")'


def test_smppy_native_options_map_to_ours_or_are_named(caplog):
    config = Config(profiler={"EnableCuda": "0"}).resolved()
    assert config.device_activity is False
    assert Config(profiler={"EnableCuda": "1"}).resolved().device_activity is True
    with caplog.at_level(logging.WARNING, logger="sagelaunch.profiler"):
        Config(profiler={"EnableCuda": "1", "BucketCount": "32", "RecordFile": "x.raw"}).resolved()
    assert "Config.profiler options BucketCount, RecordFile are SageMaker Profiler's native settings" in caplog.text


def _local_copy(folder: Path) -> Path:
    """The DLC script with its /opt/ml root made the job's own and its .smpraw check dropped (see the README)."""
    text = DLC_SCRIPT.read_text()
    assert text.count('"/opt/ml/output/profiler/framework"') == 1 and text.count(RAW_FILE_CHECK) == 1
    text = text[:text.index(RAW_FILE_CHECK)]
    text = text.replace('"/opt/ml/output/profiler/framework"',
                        'os.path.join(os.environ["SAGEMAKER_BASE_DIR"], "output/profiler/framework")')
    folder.mkdir()
    (folder / DLC_SCRIPT.name).write_text(text)
    return folder


def _mnist_like(folder: Path) -> Path:
    rng = np.random.default_rng(0)
    for split, count in (("train", 64), ("test", 16)):
        (folder / split).mkdir(parents=True)
        np.save(folder / split / f"x_{split}.npy", rng.random((count, 28, 28), dtype=np.float32))
        np.save(folder / split / f"y_{split}.npy", rng.integers(0, 10, count))
    return folder


@pytest.mark.slow
def test_the_dlc_smppy_script_profiles_a_local_job_that_profile_analyze_reads(tmp_path, monkeypatch):
    from sagelaunch.estimators import TensorFlow
    from sagelaunch.profiler_config import Profiler, ProfilerConfig

    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
    estimator = TensorFlow(entry_point=DLC_SCRIPT.name, source_dir=str(_local_copy(tmp_path / "src")),
                           framework_version="2.11.1", py_version="py39", instance_type="local",
                           hyperparameters={"epochs": 1}, output_path=str(tmp_path / "out"),
                           profiler_config=ProfilerConfig(profile_params=Profiler(cpu_profiling_duration=3600)))
    estimator.fit({"training": f"file://{_mnist_like(tmp_path / 'data')}"}, job_name=f"smppy-{uuid.uuid4().hex[:6]}",
                  logs=False)
    job = estimator.latest_training_job
    record = job.describe()
    log = "\n".join(job.logs())
    assert record["TrainingJobStatus"] == "Completed", f"{record.get('FailureReason')}\n{log[-3000:]}"
    assert "smppy: sagelaunch's profiler (the real library is not installed)" in log

    analyze = subprocess.run([sys.executable, "-m", "sagelaunch", "profile", "analyze", str(job.profiler_output),
                              "--json"], capture_output=True, text=True, timeout=600, env=os.environ)
    assert analyze.returncode == 0, analyze.stderr
    rank = json.loads(analyze.stdout)["ranks"]["0"]
    assert {"Training", "Evaluation"} <= {a["name"] for a in rank["annotations"]}
