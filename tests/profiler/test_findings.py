"""Each finding's rule on a profile that should trigger it and on one that should not (synthetic profiles written
with the artifact writer, read back through the loader), plus the shape every finding has."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sagelaunch.profiler.analysis import analyze
from sagelaunch.profiler.findings import thresholds as T
from sagelaunch.profiler.records import Finding
from tests.profiler import synthetic as syn
from tests.profiler.conftest import BARE_ENV

REPO = Path(__file__).resolve().parents[2]
RULES = ("input_bound", "low_gpu_utilization", "launch_bound", "low_overlap", "pipeline_bubble", "straggler_rank",
         "step_outlier", "memory_growth", "unexplained_step", "host_contention")


def findings_of(tmp_path: Path, *ranks, counters=None, **context) -> list[Finding]:
    root = syn.write(tmp_path / "profile", *ranks, counter_table=counters)
    result = analyze(root, context=context)
    for f in result.findings:  # every finding: what, how bad, the numbers, the setting to change
        assert f.rule in RULES and f.severity in ("high", "medium", "low")
        assert any(ch.isdigit() for ch in f.summary) and f.evidence and len(f.fix) > 40
    return result.findings


def rules(found: list[Finding]) -> set[str]:
    return {f.rule for f in found}


def one(found: list[Finding], rule: str) -> Finding:
    return next(f for f in found if f.rule == rule)


def test_a_healthy_profile_has_no_finding(tmp_path):
    flat = syn.counters([4e9] * 40)
    assert findings_of(tmp_path, syn.healthy(0), syn.healthy(1), counters=flat) == []


def test_input_bound(tmp_path):
    found = findings_of(tmp_path, syn.healthy(loader_ms=30))
    f = one(found, "input_bound")
    assert f.evidence["input_wait_share"] == pytest.approx(0.30, abs=0.01)
    assert "num_workers" in f.fix and "30%" in f.summary
    assert "input_bound" not in rules(findings_of(tmp_path / "no", syn.healthy(loader_ms=2)))


def test_low_gpu_utilization(tmp_path):
    found = findings_of(tmp_path, syn.healthy(busy=0.2))
    f = one(found, "low_gpu_utilization")
    assert f.evidence["gpu_idle_share"] > T.GPU_IDLE_SHARE and "batch" in f.fix
    assert "low_gpu_utilization" not in rules(findings_of(tmp_path / "no", syn.healthy(busy=0.95)))


def test_launch_bound(tmp_path):
    found = findings_of(tmp_path, syn.healthy(kernel_us=4, busy=0.05))
    f = one(found, "launch_bound")
    assert f.evidence["short_kernel_share"] == 1.0 and "torch.compile" in f.fix
    # many kernels but long ones, GPU busy: not launch bound
    assert "launch_bound" not in rules(findings_of(tmp_path / "no", syn.healthy(kernel_us=150, busy=0.97)))


def test_low_overlap(tmp_path):
    found = findings_of(tmp_path, syn.healthy(comm="exposed"))
    f = one(found, "low_overlap")
    assert f.evidence["exposed_share"] > 0.9 and "bucket_cap_mb" in f.fix and f.evidence["collective"] == "AllReduce"
    assert "low_overlap" not in rules(findings_of(tmp_path / "no", syn.healthy(comm="hidden")))


def test_pipeline_bubble(tmp_path):
    idle = syn.healthy(busy=0.5)
    found = findings_of(tmp_path, idle, pipeline_parallel_degree=2, microbatches=2)
    f = one(found, "pipeline_bubble")
    assert f.evidence["expected_bubble_share"] == pytest.approx(1 / 3, abs=1e-3)
    assert '"microbatches": 8' in f.fix
    assert "pipeline_bubble" not in rules(findings_of(tmp_path / "pp1", idle))  # no pipeline: not a bubble
    assert "pipeline_bubble" not in rules(findings_of(tmp_path / "busy", syn.healthy(), pipeline_parallel_degree=2))


def _waiting(rank: int, wait_ms: float, receives: int = 2, step_ms: float = 100.0):
    """A stage of a busy GPU pipeline whose Forward starts with `receives` pipeline_wait spans of `wait_ms` in all."""
    r = syn.healthy(rank, step_ms=step_ms)
    for i in range(8):
        for k in range(receives):
            each = wait_ms / receives
            r.add("pipeline_wait", "user_annotation", syn.T0 + int((i * step_ms + k * each) * syn.MS), int(each * syn.MS))
    return r


def test_pipeline_bubble_measured_from_the_stages_waits(tmp_path):
    """The stages' blocking receives (pipeline_wait) are the bubble, measured: GPUs kept busy do not hide it."""
    found = findings_of(tmp_path, _waiting(0, 40), _waiting(1, 30), pipeline_parallel_degree=2, microbatches=2)
    f = one(found, "pipeline_bubble")
    assert f.evidence["mean_stage_wait_share"] == pytest.approx(0.35, abs=0.01)
    assert f.evidence["receives_per_step"] == {"0": 2.0, "1": 2.0} and f.severity == "medium"
    assert f.evidence["expected_bubble_share"] == pytest.approx(1 / 3, abs=1e-3) and "interleaved" in f.fix
    quiet = findings_of(tmp_path / "short", _waiting(0, 15), _waiting(1, 15), pipeline_parallel_degree=2)
    assert "pipeline_bubble" not in rules(quiet)  # a short wait is not worth more microbatches


def test_straggler_rank(tmp_path):
    found = findings_of(tmp_path, syn.healthy(0), syn.healthy(1, step_ms=150), syn.healthy(2))
    f = one(found, "straggler_rank")
    assert f.rank == "1" and f.evidence["ratio"] == pytest.approx(1.5, rel=0.01)
    assert "straggler_rank" not in rules(findings_of(tmp_path / "no", syn.healthy(0), syn.healthy(1, step_ms=105)))


def test_step_outlier(tmp_path):
    found = findings_of(tmp_path, syn.healthy(steps=10, slow={6: 300}))
    f = one(found, "step_outlier")
    assert f.evidence["slowest_step"] == 6 and f.evidence["slowest_step_ms"] == pytest.approx(300, rel=0.01)
    assert f.evidence["time_lost_ms"] == pytest.approx(200, rel=0.01) and "timeline at step 6" in f.fix
    # the same +200 ms every 10 steps: a period, named with the setting that sets it
    periodic = findings_of(tmp_path / "periodic", syn.healthy(steps=40, slow={10: 300, 20: 300, 30: 300, 40: 300}))
    f = one(periodic, "step_outlier")
    assert f.evidence["period_steps"] == 10 and "Every 10 steps, +200" in f.summary and "save_steps" in f.fix
    # the first steps are warm-up (and the profiler's start-up): slow, but not outliers
    assert "step_outlier" not in rules(findings_of(tmp_path / "no", syn.healthy(steps=10, slow={1: 300, 2: 300})))
    # a slow step losing under 0.1 s in all is not worth a change
    assert "step_outlier" not in rules(findings_of(tmp_path / "small", syn.healthy(steps=10, step_ms=1, slow={6: 5})))


def test_memory_growth(tmp_path):
    growing = syn.counters([2e9 + 1e8 * i for i in range(40)])
    f = one(findings_of(tmp_path, syn.healthy(), counters=growing), "memory_growth")
    assert f.evidence["series"] == "GPU 0 memory used" and "loss.item()" in f.fix
    # grows then stays: the allocator's cache warming up, not a leak of every step
    plateau = syn.counters([2e9 + 1e8 * min(i, 4) for i in range(40)])
    assert "memory_growth" not in rules(findings_of(tmp_path / "no", syn.healthy(), counters=plateau))


def test_every_rule_is_tested_and_documented():
    from sagelaunch.profiler.findings.rules import RULES as FUNCS

    assert tuple(f.__name__ for f in FUNCS) == RULES
    readme = (REPO / "profiler" / "README.md").read_text()
    for name in RULES:
        assert f"`{name}`" in readme, name
    for const in dir(T):
        if const.isupper():
            assert const in readme, const  # every threshold is documented


def test_real_traces(analyses):
    # the sampled job's NCCL SendRecv kernels run with nothing alongside; the v100 job is busy (97% compute)
    overlap = next(f for f in analyses["sampled_rank0.pt.trace.json.gz"]["findings"] if f["rule"] == "low_overlap")
    # the collective it names is the one the trace shows: TorchRec's awaitables (KJTAllToAll…) say the SendRecv
    # kernels are its embeddings' all-to-all, not a pipeline's send/recv, and the fix is that collective's
    assert overlap["evidence"]["collective"] == "AllToAll" and "SendRecv" in overlap["evidence"]["collective_kernel"]
    assert "TrainPipelineSparseDist" in overlap["fix"] and "microbatches" not in overlap["fix"]
    assert analyses["v100_rank0.pt.trace.json.gz"]["findings"] == []
    assert analyses["cpu_only.pt.trace.json.gz"]["findings"] == []


def test_cli_text_and_json_list_findings(tmp_path):
    root = syn.write(tmp_path / "p", syn.healthy(loader_ms=30))
    env = {**BARE_ENV, "COLUMNS": "200"}
    out = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.cli", "analyze", str(root), "--json"], capture_output=True,
                         text=True, env=env, timeout=120, cwd=REPO)
    doc = json.loads(out.stdout)
    assert doc["findings"] and doc["findings"][0]["rule"] == "input_bound"
    text = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.cli", "analyze", str(root)], capture_output=True,
                          text=True, env=env, timeout=120, cwd=REPO).stdout
    assert "input_bound" in text and doc["findings"][0]["summary"] in text and "fix: " in text


def test_host_contention(tmp_path):
    import pyarrow as pa

    # irregular steps slower in every phase at once: the host, not the code (no step_outlier for them)
    slow = {7: 260, 13: 240, 19: 300, 23: 250, 31: 280, 37: 270}
    found = findings_of(tmp_path, syn.healthy(steps=60, slow=slow))
    f = one(found, "host_contention")
    assert f.rank is None and f.evidence["slow_steps"] == 6 and f.severity != "high" and "cpuset" in f.fix
    assert "step_outlier" not in rules(found)
    # every core busy in the host's samples: irregular slow steps are the host's, whatever phase they stretch
    busy = pa.concat_tables([syn.counters([100.0] * 10, metric="cpu_util", index=i, span_s=6.0) for i in (0, 1)])
    f = one(findings_of(tmp_path / "busy", syn.healthy(steps=60, slow={7: 400, 19: 400, 31: 400}), counters=busy),
            "host_contention")
    assert f.evidence["samples_with_every_core_busy_share"] == 1.0
    # a single pause slower everywhere is no pattern: step_outlier's, as before
    assert "host_contention" not in rules(findings_of(tmp_path / "one", syn.healthy(steps=10, slow={6: 300})))


def test_unexplained_step(tmp_path):
    from sagelaunch.profiler.findings.step_rules import WHERE

    assert set(WHERE) == {"before_first_work", "between_work", "after_last_work", "between_steps"}
    # the synthetic loop's phases cover its steps: nothing unexplained
    assert "unexplained_step" not in rules(findings_of(tmp_path, syn.healthy(steps=20)))


def test_pipeline_bubble_beyond_what_the_schedule_explains(tmp_path):
    """Stages waiting far beyond the schedule's bubble (45 % against 1/9 at 8 microbatches, or against an interleaved
    schedule's 1/5 at 2) are told the rest is uneven stages or communication, before more microbatches."""
    found = findings_of(tmp_path, _waiting(0, 50, 8), _waiting(1, 40, 8), pipeline_parallel_degree=2, microbatches=8)
    f = one(found, "pipeline_bubble")
    assert f.evidence["expected_bubble_share"] == pytest.approx(1 / 9, abs=1e-3)
    assert "schedule accounts for 11%" in f.summary and f.fix.startswith("First even out the stages")
    interleaved = one(findings_of(tmp_path / "v2", _waiting(0, 35), _waiting(1, 35), pipeline_parallel_degree=2,
                                  microbatches=2, virtual_stages=2), "pipeline_bubble")
    assert interleaved.evidence["expected_bubble_share"] == pytest.approx(0.2, abs=1e-3)
    assert interleaved.evidence["schedule"] == "interleaved, 2 stages per rank"
    assert "schedule accounts for 20%" in interleaved.summary
    # the same waits under GPipe's 1/3 are the schedule's own bubble: more microbatches, nothing else
    gpipe = one(findings_of(tmp_path / "v1", _waiting(0, 35), _waiting(1, 35), pipeline_parallel_degree=2,
                            microbatches=2), "pipeline_bubble")
    assert "accounts" not in gpipe.summary and gpipe.fix.startswith("Split each batch")


def test_pipeline_bubble_expected_per_fill_of_the_pipeline(tmp_path):
    """sagelaunch's SMP runs active_microbatches' waves, each filling and draining the pipeline: 8 microbatches in
    waves of 2 leave GPipe's bubble at 2 microbatches, 1/3, not 1/9."""
    found = findings_of(tmp_path, _waiting(0, 35, 8), _waiting(1, 35, 8), pipeline_parallel_degree=2, microbatches=8,
                        microbatches_per_fill=2)
    f = one(found, "pipeline_bubble")
    assert f.evidence["expected_bubble_share"] == pytest.approx(1 / 3, abs=1e-3)
    assert f.evidence["microbatches_per_fill"] == 2 and "accounts" not in f.summary
