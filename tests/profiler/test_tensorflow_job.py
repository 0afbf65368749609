"""A profiled TensorFlow job under the local backend (tensorflow-cpu): annotations, start/stop, utilisation and
tf.profiler's device activity end up in the artifact, and `profile analyze` / `profile report` read it."""

from __future__ import annotations

import textwrap
import time
import uuid
from pathlib import Path

import pytest

TF_SCRIPT = textwrap.dedent('''
    import tensorflow as tf
    import sagelaunch.profiler as smprof

    tf.random.set_seed(0)
    model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    x, y = tf.random.normal((64, 8)), tf.random.normal((64, 1))
    model.train_on_batch(x, y)  # build and trace before profiling
    smprof.start_profiling()
    for step in range(1, 5):
        with smprof.annotate(f"step_{step}"):
            with smprof.annotate("Forward+Backward"):
                model.train_on_batch(x, y)
    smprof.stop_profiling()
    print("tf job done", flush=True)
''')

TERMINAL = {"Completed", "Failed", "Stopped"}


@pytest.fixture(scope="module")
def tf_job(tmp_path_factory):
    from sagelaunch.estimators import TensorFlow
    from sagelaunch.profiler_config import ProfilerConfig

    root = tmp_path_factory.mktemp("tf-job")
    (root / "src").mkdir()
    (root / "src" / "train_tf.py").write_text(TF_SCRIPT)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SAGELAUNCH_HOME", str(root / "home"))
        mp.setenv("TF_CPP_MIN_LOG_LEVEL", "2")
        estimator = TensorFlow(entry_point="train_tf.py", source_dir=str(root / "src"), framework_version="2.11.1",
                               py_version="py39", instance_type="local", output_path=str(root / "out"),
                               profiler_config=ProfilerConfig(system_monitor_interval_millis=100))
        job = estimator.fit(job_name=f"prof-tf-{uuid.uuid4().hex[:6]}", wait=False, logs=False)
        deadline = time.monotonic() + 300
        while (status := job.describe()["TrainingJobStatus"]) not in TERMINAL and time.monotonic() < deadline:
            time.sleep(0.2)
        if status not in TERMINAL:
            job.stop()
        tail = "\n".join(list(job.logs())[-40:])
        assert status == "Completed", f"TF job ended {status}: {job.describe().get('FailureReason')}\n{tail}"
        return Path(job.profiler_output)


@pytest.mark.slow
def test_tf_job_profile_is_analysed(tf_job):
    from tests.profiler.conftest import analysis_json
    from sagelaunch.profiler.loader import load_profile

    result = analysis_json(tf_job)
    rank = result["ranks"]["0"]
    assert rank["steps"]["count"] == 4 and sorted(s["step"] for s in rank["steps"]["steps"]) == [1, 2, 3, 4]
    names = {a["name"] for a in rank["annotations"]}
    assert "Forward+Backward" in names and any(n.startswith("step_") for n in names), names
    assert result["hosts"]["algo-1"]["metrics"]["cpu_util"]["samples"] >= 1
    trace = load_profile(tf_job).ranks[0]
    cats = [trace.cats[c] for c in trace["cat_id"]]
    assert cats.count("cpu_op") > 20, "tf.profiler's activity is missing"  # TF's host ops, converted
    # TF's activity lies within the profiled steps (its clock is put on ours at start_profiling)
    steps = [i for i, n in enumerate(trace["name_id"]) if trace.names[n].startswith("step_")]
    first, last = trace["ts_ns"][steps].min(), (trace["ts_ns"] + trace["dur_ns"])[steps].max()
    ops = [i for i, c in enumerate(cats) if c == "cpu_op"]
    inside = [(first - 50e6) <= trace["ts_ns"][i] <= (last + 50e6) for i in ops]
    assert sum(inside) >= 0.9 * len(ops)


@pytest.mark.slow
def test_tf_job_profile_makes_a_report(tf_job, tmp_path):
    from sagelaunch.profiler.report.html import write_report

    written = write_report(tf_job, tmp_path / "report.html")
    html = written.read_text()
    assert "Forward+Backward" in html and "algo-1" in html  # the annotations and the host counters
