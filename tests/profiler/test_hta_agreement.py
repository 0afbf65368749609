"""Our temporal breakdown, kernel-type sums, launch statistics, idle-time breakdown and queue length agree with HTA 0.5
on every GPU trace."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.profiler.conftest import HTA_REFERENCE, TRACES

REL = 0.005  # within 0.5%

GPU_TRACES = ["alexnet.pt.trace.json.gz", "mi250_rocm.pt.trace.json.gz", "sampled_rank0.pt.trace.json.gz",
              "sampled_rank1.pt.trace.json.gz", "v100_rank0.pt.trace.json.gz"]


def close(ours: float, ref: float) -> bool:
    return abs(ours - ref) <= REL * max(abs(ref), 1.0)


def test_fixture_covers_every_gpu_trace(hta_reference):
    on_disk = {p.name for p in TRACES.glob("*.json.gz")}
    assert set(GPU_TRACES) <= on_disk
    for name in GPU_TRACES:
        assert "temporal" in next(iter(hta_reference[name]["ranks"].values())), name


@pytest.mark.parametrize("name", GPU_TRACES)
def test_temporal_breakdown_matches_hta(name, hta_reference, analyses):
    for rank, ref in hta_reference[name]["ranks"].items():
        ours = analyses[name]["ranks"][rank]["temporal"]
        for key, value in ref["temporal"].items():
            assert close(ours[key], value), (name, rank, key, ours[key], value)


@pytest.mark.parametrize("name", GPU_TRACES)
def test_kernel_type_sums_match_hta(name, hta_reference, analyses):
    for rank, ref in hta_reference[name]["ranks"].items():
        ours = analyses[name]["ranks"][rank]["kernel_types"]
        assert set(ours) == set(ref["kernel_types"]), (name, ours, ref["kernel_types"])
        for label, value in ref["kernel_types"].items():
            assert close(ours[label], value), (name, label, ours[label], value)


@pytest.mark.parametrize("name", [n for n in GPU_TRACES if not n.startswith("mi250")])
def test_launch_stats_follow_hta_definition(name, hta_reference, analyses):
    for rank, ref in hta_reference[name]["ranks"].items():
        ours = analyses[name]["ranks"][rank]["launch"]
        assert ours["count"] == ref["launch"]["count"]
        assert close(ours["mean_launch_delay_us"], ref["launch"]["mean_launch_delay_us"])


def test_rocm_launches_use_the_hip_spelling_of_the_same_definition(hta_reference, analyses):
    # HTA only knows cudaLaunchKernel & co. and finds none in a ROCm trace; we join the HIP runtime calls.
    assert hta_reference["mi250_rocm.pt.trace.json.gz"]["ranks"]["0"]["launch"]["count"] == 0
    ours = analyses["mi250_rocm.pt.trace.json.gz"]["ranks"]["0"]["launch"]
    assert ours["count"] == 12 and ours["mean_launch_delay_us"] > 0


@pytest.mark.parametrize("name", GPU_TRACES)
def test_idle_time_breakdown_equals_hta(name, hta_reference, analyses):
    """Per stream: host wait, kernel wait and other idle time (get_idle_time_breakdown, consecutive_kernel_delay=30)."""
    for rank, ref in hta_reference[name]["ranks"].items():
        ours = analyses[name]["ranks"][rank]["idle_breakdown"]["streams"]
        assert set(ours) == set(ref["idle_breakdown"]), (name, rank)
        for stream, categories in ref["idle_breakdown"].items():
            for category, value in categories.items():
                assert ours[stream][category] == pytest.approx(value, abs=1e-6), (name, rank, stream, category)


@pytest.mark.parametrize("name", GPU_TRACES)
def test_comm_comp_overlap_equals_hta(name, hta_reference, analyses):
    """The share of communication time with computation alongside (get_comm_comp_overlap); none without NCCL."""
    for rank, ref in hta_reference[name]["ranks"].items():
        ours = analyses[name]["ranks"][rank]["overlap"]
        if ref["comp_comm_overlap_pctg"] is None:
            assert ours is None, (name, rank)
        else:
            assert ours["comp_comm_overlap_pct"] == ref["comp_comm_overlap_pctg"], (name, rank)


@pytest.mark.parametrize("name", GPU_TRACES)
def test_queue_length_equals_hta(name, hta_reference, analyses):
    """Per stream: the points of the queue-length series, their mean and max (get_queue_length_summary)."""
    for rank, ref in hta_reference[name]["ranks"].items():
        ours = analyses[name]["ranks"][rank]["launch"]["queue"]["streams"]
        assert set(ours) == set(ref["queue"]), (name, rank)
        for stream, summary in ref["queue"].items():
            assert ours[stream]["count"] == summary["count"] and ours[stream]["max"] == summary["max"], (name, stream)
            assert ours[stream]["mean"] == pytest.approx(summary["mean"], rel=1e-12), (name, stream)


def test_two_ranks_loaded_as_a_folder_match_hta(hta_reference, tmp_path):
    from tests.profiler.conftest import analysis_json

    for name in ("sampled_rank0.pt.trace.json.gz", "sampled_rank1.pt.trace.json.gz"):
        os.symlink(TRACES / name, tmp_path / name)
    result = analysis_json(tmp_path)
    ref = hta_reference["sampled (2 ranks)"]["ranks"]
    assert sorted(result["ranks"]) == sorted(ref) == ["0", "1"]
    for rank in ref:
        for key, value in ref[rank]["temporal"].items():
            assert close(result["ranks"][rank]["temporal"][key], value)
        for label, value in ref[rank]["kernel_types"].items():
            assert close(result["ranks"][rank]["kernel_types"][label], value)
        assert result["ranks"][rank]["launch"]["queue"]["streams"] == {
            stream: {"mean": pytest.approx(q["mean"], rel=1e-12), "max": q["max"], "count": q["count"]}
            for stream, q in ref[rank]["queue"].items()}


def test_fixture_records_how_it_was_made():
    assert HTA_REFERENCE.exists()
    assert (Path(__file__).resolve().parents[2] / "scripts" / "make_hta_fixtures.py").exists()
