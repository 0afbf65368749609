"""A whole profiled job, end to end: estimators.PyTorch(instance_type="local", profiler_config=...) runs a training
script under the local backend (torchrun, the monitor sidecar), the profile is published under the job's output path,
and profiler.analysis.analyze reads it back.

Two tiny jobs run side by side (one module fixture): one annotates with `from sagelaunch import profiler as smprof` (context
manager, decorator, begin/end handles), the other is a Hugging Face Trainer with the ProfilerCallback and no
annotations of its own. The smprof job opts in to CPU operators; the HF job uses the profiler's defaults.
"""

from __future__ import annotations

import textwrap
import time
import uuid
from pathlib import Path

import pytest

from tests.profiler.conftest import analysis_json
from sagelaunch.profiler.loader import load_profile

SMPROF_SCRIPT = textwrap.dedent('''
    import torch
    import sagelaunch.profiler as smprof

    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = torch.randn(16, 32), torch.randint(0, 2, (16,))

    @smprof.annotate("data_loading")
    def next_batch():
        return x, y

    smprof.configure(smprof.Config(record_cpu_ops=True))  # opt in; the rest comes from the job's profilerconfig.json
    smprof.start_profiling()
    for step in range(1, 6):
        with smprof.annotate(f"step_{step}"):
            xb, yb = next_batch()
            with smprof.annotate("Forward"):
                loss = torch.nn.functional.cross_entropy(model(xb), yb)
            handle = smprof.annotation_begin("Backward")
            loss.backward()
            smprof.annotation_end(handle)
            with smprof.annotate("Optimizer"):
                opt.step()
                opt.zero_grad()
    smprof.stop_profiling()
    print("smprof job done", flush=True)
''')

HF_SCRIPT = textwrap.dedent('''
    import torch
    from datasets import Dataset
    from transformers import RobertaConfig, RobertaForSequenceClassification, Trainer, TrainingArguments
    from sagelaunch.profiler.hf_callback import callbacks_if_configured

    torch.manual_seed(0)
    torch.set_num_threads(1)
    cfg = RobertaConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                        vocab_size=200, max_position_embeddings=40, num_labels=2)
    ds = Dataset.from_dict({"input_ids": [[5] * 16] * 24, "attention_mask": [[1] * 16] * 24, "labels": [0, 1] * 12})
    args = TrainingArguments(output_dir="/tmp/unused", per_device_train_batch_size=8, max_steps=3, report_to=[],
                             save_strategy="no", use_cpu=True, logging_steps=100, disable_tqdm=True)
    callbacks = callbacks_if_configured()
    assert callbacks, "the job's profilerconfig.json should switch the callback on"
    Trainer(model=RobertaForSequenceClassification(cfg), args=args, train_dataset=ds, callbacks=callbacks).train()
    print("hf job done", flush=True)
''')

JOB_TIMEOUT_S = 240
TERMINAL = {"Completed", "Failed", "Stopped"}


def wait_for_end(job, timeout: float = JOB_TIMEOUT_S) -> str:
    """Poll the job's status until it ends (deadline: stop the job and fail)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = job.describe()["TrainingJobStatus"]
        if status in TERMINAL:
            return status
        time.sleep(0.1)
    job.stop()
    raise AssertionError(f"job {job.describe()['TrainingJobName']} did not end within {timeout}s")


@pytest.fixture(scope="module")
def profiled_jobs(tmp_path_factory) -> dict[str, dict]:
    """Both jobs submitted without waiting (they overlap), then awaited; per job its profile folder and analysis."""
    from sagelaunch.estimators import PyTorch
    from sagelaunch.profiler_config import ProfilerConfig

    root = tmp_path_factory.mktemp("profiled-job")
    source = root / "src"
    source.mkdir()
    (source / "train_smprof.py").write_text(SMPROF_SCRIPT)
    (source / "train_hf.py").write_text(HF_SCRIPT)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SAGELAUNCH_HOME", str(root / "home"))
        mp.setenv("TOKENIZERS_PARALLELISM", "false")
        jobs = {}
        for kind in ("smprof", "hf"):
            estimator = PyTorch(
                entry_point=f"train_{kind}.py", source_dir=str(source), framework_version="2.0.0",
                py_version="py310", instance_type="local", output_path=str(root / "out"),
                profiler_config=ProfilerConfig(system_monitor_interval_millis=100),
            )
            jobs[kind] = estimator.fit(job_name=f"prof-e2e-{kind}-{uuid.uuid4().hex[:6]}", wait=False, logs=False)
        results = {}
        for kind, job in jobs.items():
            status = wait_for_end(job)
            log_tail = "\n".join(list(job.logs())[-40:])
            assert status == "Completed", f"{kind} job ended {status}: {job.describe().get('FailureReason')}\n{log_tail}"
            output = job.profiler_output
            assert output, f"{kind} job has no profiler output"
            results[kind] = {"path": Path(output), "analysis": analysis_json(output)}
    return results


@pytest.mark.parametrize("kind", ["smprof", "hf"])
def test_profile_is_published_per_host_and_holds_the_sidecars_counters(profiled_jobs, kind):
    result = profiled_jobs[kind]
    path, analysis = result["path"], result["analysis"]
    assert path.is_dir() and (path / "algo-1").is_dir()
    assert sorted((path / "algo-1").glob("system-*.parquet")), "the monitor sidecar wrote no counters"
    assert sorted((path / "algo-1" / "rank-0").glob("trace-*.parquet"))
    assert list(analysis["hosts"]) == ["algo-1"]
    cpu_util = analysis["hosts"]["algo-1"]["metrics"]["cpu_util"]
    assert cpu_util["samples"] >= 1 and 0.0 <= cpu_util["mean"] <= 100.0
    assert set(cpu_util["series"]) >= {"0"}  # one series per core
    assert set(analysis["ranks"]) == {"0"}
    assert not analysis["warnings"]


def test_smprof_annotations_steps_and_cpu_ops(profiled_jobs):
    rank = profiled_jobs["smprof"]["analysis"]["ranks"]["0"]
    assert rank["steps"]["count"] == 5
    assert sorted(s["step"] for s in rank["steps"]["steps"]) == [1, 2, 3, 4, 5]
    by_name = {a["name"]: a for a in rank["annotations"]}
    for name in ("Forward", "Backward", "Optimizer", "data_loading"):
        assert by_name[name]["count"] == 5, name
        assert sum(by_name[name]["histogram"]["counts"]) == 5, name
    assert rank["cpu"]["active_us"] > 0 and rank["temporal"] is None  # CPU-only: no GPU sections
    trace = load_profile(profiled_jobs["smprof"]["path"]).ranks[0]
    assert trace.meta.host == "algo-1"
    ops = {trace.names[n] for n, c in zip(trace["name_id"], trace["cat_id"]) if trace.cats[c] == "cpu_op"}
    assert {"aten::linear", "aten::relu"} <= ops  # the script opted in to CPU operators


def test_hf_callback_annotates_the_trainer_job(profiled_jobs):
    rank = profiled_jobs["hf"]["analysis"]["ranks"]["0"]
    assert rank["steps"]["count"] == 3
    names = {a["name"] for a in rank["annotations"]}
    assert {"step_N", "Forward", "Backward", "Optimizer"} <= names  # steps pooled, as the dashboard shows them
    assert next(a for a in rank["annotations"] if a["name"] == "step_N")["count"] == 3
    trace = load_profile(profiled_jobs["hf"]["path"]).ranks[0]
    # defaults: annotations, the torch hooks' optimizer/DataLoader spans and memory samples; no operators
    assert sorted(trace.cats) == ["memory_sample", "sagelaunch_hook", "user_annotation"]
    loop = rank["loop"]  # the Trainer fetches each batch before the callback opens step_N: the wait is between steps
    assert loop["source"] == "step annotations" and loop["input_source"] == "DataLoader hooks"
