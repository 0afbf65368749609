"""Inside a real (tiny) Hugging Face training run: the callback's annotations, and Kineto capture of CPU ops
(off by default; Config(record_cpu_ops=True) turns it on)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from sagelaunch.profiler.loader import load_profile
from tests.profiler.conftest import analysis_json, script_env
from tests.profiler.test_cpu_ops_duty_cycle import train

SCRIPT = textwrap.dedent(r'''
    import json, os, sys
    import torch
    from datasets import Dataset
    from transformers import RobertaConfig, RobertaForSequenceClassification, Trainer, TrainingArguments
    import sagelaunch.profiler as smprof
    from sagelaunch.profiler.api import SMProfiler
    from sagelaunch.profiler.hf_callback import ProfilerCallback

    torch.manual_seed(0)
    cfg = RobertaConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                        vocab_size=200, max_position_embeddings=40, num_labels=2)
    ds = Dataset.from_dict({"input_ids": [[5] * 16] * 32, "attention_mask": [[1] * 16] * 32, "labels": [0, 1] * 16})
    import time
    t0 = time.time_ns()
    for run, cpu_ops, accumulate in (("cpu_ops", True, 1), ("default", None, 1), ("accumulate", None, 4)):
        SMProfiler._instance = None
        smprof.configure(smprof.Config(output_dir=os.path.join(sys.argv[1], run), record_cpu_ops=cpu_ops))
        args = TrainingArguments(output_dir=os.path.join(sys.argv[1], "hf"), per_device_train_batch_size=8,
                                 max_steps=4 if accumulate == 1 else 3, report_to=[], save_strategy="no", use_cpu=True,
                                 logging_steps=100, disable_tqdm=True, gradient_accumulation_steps=accumulate)
        Trainer(model=RobertaForSequenceClassification(cfg), args=args, train_dataset=ds,
                callbacks=[ProfilerCallback()]).train()
        assert not SMProfiler.instance().active  # the callback stopped what it started
    with open(os.path.join(sys.argv[1], "clock.json"), "w") as f:
        json.dump([t0, time.time_ns()], f)
''')


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("hf")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(out)], capture_output=True, text=True,
                          env=script_env({"SM_CURRENT_HOST": "algo-1", "RANK": "0"}), timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _spans(rank, name):
    idx = [i for i, n in enumerate(rank["name_id"]) if rank.names[n] == name]
    return [(int(rank["ts_ns"][i]), int(rank["ts_ns"][i] + rank["dur_ns"][i])) for i in idx]


@pytest.mark.parametrize("run", ["cpu_ops", "default"])
def test_callback_annotates_steps_forward_backward_optimizer(runs, run):
    rank = load_profile(runs / run / "algo-1").ranks[0]
    steps = [_spans(rank, f"step_{i}") for i in range(1, 5)]
    assert all(len(s) == 1 for s in steps)
    fwd, bwd, opt = (_spans(rank, n) for n in ("Forward", "Backward", "Optimizer"))
    assert len(fwd) == len(bwd) == len(opt) == 4
    for (s0, s1), f, b, o in zip((s[0] for s in steps), fwd, bwd, opt):
        assert s0 <= f[0] < f[1] <= b[0] < b[1] <= o[0] < o[1] <= s1  # in order, inside their step
    result = analysis_json(runs / run)["ranks"]["0"]
    assert result["steps"]["count"] == 4


def test_the_trainers_gradient_accumulation_is_recorded_and_steps_are_optimizer_steps(runs):
    """gradient_accumulation_steps=4: each step_N the callback opens spans 4 micro-batches (4 Forwards, 1 Optimizer);
    the profile records the Trainer's setting and the loop reports 4 micro-steps per step, 3 steps."""
    rank = load_profile(runs / "accumulate" / "algo-1").ranks[0]
    assert rank.meta.job_settings["gradient_accumulation_steps"] == 4
    assert len(_spans(rank, "Forward")) == 12 and len(_spans(rank, "Optimizer")) == 3
    loop = analysis_json(runs / "accumulate")["ranks"]["0"]["loop"]
    assert loop["micro_steps_per_step"] == 4 and loop["count"] == 3
    assert analysis_json(runs / "default")["ranks"]["0"]["loop"].get("micro_steps_per_step") is None  # k = 1


def test_record_cpu_ops_captures_operators_and_the_default_does_not(runs):
    detailed = load_profile(runs / "cpu_ops" / "algo-1").ranks[0]
    assert "cpu_op" in detailed.cats
    ops = {detailed.names[i] for i, c in zip(detailed["name_id"], detailed["cat_id"]) if detailed.cats[c] == "cpu_op"}
    assert {"aten::addmm", "aten::embedding"} <= ops or "aten::linear" in ops
    result = analysis_json(runs / "cpu_ops")["ranks"]["0"]
    assert result["cpu"]["active_us"] > 0 and result["temporal"] is None  # no GPU here
    annotations_only = load_profile(runs / "default" / "algo-1").ranks[0]
    # the default: annotations and the torch hooks' steps/DataLoader/memory samples, never an operator
    assert set(annotations_only.cats) == {"user_annotation", "sagelaunch_hook", "memory_sample"}


def test_outside_a_sagelaunch_job_local_rank_0_samples_utilisation_itself(runs):
    # no SAGELAUNCH_PROFILER_CONFIG (so no sidecar): the profiler's own monitor thread wrote the counters
    profile = load_profile(runs / "default")
    assert profile.counters is not None
    metrics = set(profile.counters.column("metric").to_pylist())
    assert {"cpu_util", "host_mem_util"} <= metrics


def test_kineto_and_our_events_share_the_epoch_clock(runs):
    t0, t1 = json.loads((runs / "clock.json").read_text())
    for run in ("cpu_ops", "default"):
        rank = load_profile(runs / run / "algo-1").ranks[0]
        assert t0 <= int(rank["ts_ns"].min()) and int((rank["ts_ns"] + rank["dur_ns"]).max()) <= t1, run


@pytest.mark.slow
def test_cpu_op_windows_rotate_by_steps_and_lose_nothing(tmp_path):
    """Operators in every step, SMPFileRotationSteps=5 over 12 steps: three windows (5, 5, 2 steps), written by the writer thread, every
    step and its operators present once."""
    files = train(tmp_path, 12, cpu_ops_steps=1, cpu_ops_every_steps=1, file_rotation_steps=5)
    assert [f.name for f in files] == ["trace-0000.parquet", "trace-0001.parquet", "trace-0002.parquet"]
    from sagelaunch.profiler.artifact import read_events

    per_window = []
    for f in files:
        rank = read_events([f])
        names = [rank.names[i] for i in rank["name_id"]]
        per_window.append(sorted(int(n[5:]) for n in names if n.startswith("step_")))
        assert names.count("Forward") == len(per_window[-1]) and "aten::linear" in names
    assert per_window == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]]
