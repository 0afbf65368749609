"""The CUDA allocator's memory, from the samples the torch hooks record to the analysis, the finding, the figure and
the timeline's chart.

There is no GPU on the machines these tests run on, so the samples are fed as the hooks record them
(profiler/torch_hooks.py: `torch.cuda.memory_allocated()` and `memory_reserved()` beside the process's RSS after an
optimizer step) through the profiler's own recorder and artifact writer; what a GPU adds is only where the numbers
come from. A job on a GPU machine (scripts/gpu_check.py) records real ones.
"""

from __future__ import annotations

import pytest

from sagelaunch.profiler import artifact
from sagelaunch.profiler.analysis import analyze
from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.recorder import AnnotationRecorder
from sagelaunch.profiler.schema import SAMPLE_CUDA_ALLOCATED, SAMPLE_CUDA_RESERVED, SAMPLE_RSS, TraceMeta
from sagelaunch.profiler.timeline.model import build_timeline

T0 = 1_700_000_000_000_000_000
STEP_NS = 50_000_000
MIB = 2**20
STEPS = 160


def write_job(root, allocated_per_step: int, plateau_after: int = STEPS) -> None:
    """160 annotated steps of 50 ms; after each, the samples the hooks take. CUDA memory allocated: 1.5 GiB of
    weights and optimizer state, growing by `allocated_per_step` until `plateau_after`; reserved: what the caching
    allocator holds, allocated rounded up to its 20 MiB segments; RSS flat."""
    rec = AnnotationRecorder()
    for step in range(1, STEPS + 1):
        start, end = T0 + (step - 1) * STEP_NS, T0 + step * STEP_NS - 1_000_000
        rec.add(f"step_{step}", start, end)
        allocated = 1536 * MIB + allocated_per_step * min(step, plateau_after)
        rec.add_sample(SAMPLE_RSS, end, 900 * MIB)
        rec.add_sample(SAMPLE_CUDA_ALLOCATED, end, allocated)
        rec.add_sample(SAMPLE_CUDA_RESERVED, end, -(-allocated // (20 * MIB)) * 20 * MIB)
    meta = TraceMeta(rank=0, host="algo-1", kind="sagelaunch", source="recorded samples")
    artifact.write_events(rec.drain(meta), root / "algo-1" / "rank-0" / "trace-0000.parquet")


def test_a_cuda_leak_is_found_in_the_allocator_samples_and_charted(tmp_path):
    write_job(tmp_path, allocated_per_step=8 * MIB)  # a tensor with its graph kept every step: +1.25 GiB
    result = analyze(tmp_path)
    memory = result.ranks["0"].memory
    assert set(memory) == {"process_rss", "cuda_allocated", "cuda_reserved"}
    allocated = memory["cuda_allocated"]
    assert allocated.samples == STEPS and allocated.bytes[0] == 1544 * MIB and allocated.bytes[-1] == 2816 * MIB

    found = {f.evidence["series"]: f for f in result.findings if f.rule == "memory_growth"}
    assert set(found) == {"cuda_allocated", "cuda_reserved"}  # RSS is flat: not named
    leak = found["cuda_allocated"]
    assert leak.severity == "high" and leak.rank == "0" and "CUDA memory allocated" in leak.summary
    assert leak.evidence["last_quarter_mib"] - leak.evidence["first_quarter_mib"] == pytest.approx(960, abs=10)
    assert "torch.cuda.memory_allocated()" in leak.fix

    figure = next(f for f in result.figures if f.key == "memory:cuda_allocated")
    assert figure.text == "1,544 → 2,816 MiB, peak 2,816 MiB" and figure.value == 2816 * MIB

    model = build_timeline(load_profile(tmp_path))
    charts = {model.tracks[c.track].label: c for c in model.counters}
    chart = charts["rank 0 cuda allocated"]
    assert chart.unit == " MiB" and chart.max == 2816.0 and len(chart.values) == STEPS  # scaled to its own peak
    assert charts["rank 0 cuda reserved"].max == 2820.0 and charts["rank 0 process rss"].max == 900.0


def test_an_allocator_cache_that_warms_up_then_stays_is_not_a_leak(tmp_path):
    write_job(tmp_path, allocated_per_step=64 * MIB, plateau_after=4)  # the first steps fill the cache, then flat
    result = analyze(tmp_path)
    assert result.ranks["0"].memory["cuda_allocated"].bytes[-1] == 1792 * MIB
    assert [f for f in result.findings if f.rule == "memory_growth"] == []
