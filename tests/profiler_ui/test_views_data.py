"""The data behind the views: timeline model and payload, dashboard sections, on the real reference traces."""

from __future__ import annotations

import base64

import numpy as np
import pytest

from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.report.data import NO_GPU, dashboard_data
from sagelaunch.profiler.timeline.model import build_timeline
from sagelaunch.profiler.timeline.payload import to_payload
from tests.profiler_ui.conftest import trace


@pytest.fixture(scope="module")
def v100():
    return load_profile(trace("v100_rank0.pt.trace.json.gz"))


def labels(node) -> list[str]:
    return [c["label"] for c in node.get("children", [])]


def test_timeline_tree_links_and_steps(v100):
    m = build_timeline(v100)
    assert len(m) == len(v100.ranks[0])
    # sorted by track then start, so each track is one contiguous run the renderer can search
    key = m.track.astype(np.float64) * 1e12 + m.start_us
    assert (np.diff(key) >= 0).all()
    tree = [n.to_dict() for n in m.tree]
    assert [n["label"] for n in tree] == ["algo-1"] and labels(tree[0]) == ["CPU", "GPUs"]
    gpu = tree[0]["children"][1]["children"][0]
    assert gpu["label"] == "GPU 0 (rank 0)" and labels(gpu) == ["host", "stream 7"]
    linked = np.flatnonzero(m.link >= 0)
    assert len(linked) == 2 * (4350 + 1600 + 145)
    assert (m.link[m.link[linked]] == linked).all(), "links are symmetric"
    assert (m.corr[linked] == m.corr[m.link[linked]]).all()
    cats = np.array(m.cats)[m.cat[linked]]
    partner = np.array(m.cats)[m.cat[m.link[linked]]]
    assert set(zip(cats, partner)) <= {("cuda_runtime", c) for c in ("kernel", "gpu_memcpy", "gpu_memset")} | {
        (c, "cuda_runtime") for c in ("kernel", "gpu_memcpy", "gpu_memset")}
    host_track = m.tracks.index(next(t for t in m.tracks if t.path == "algo-1 / GPUs / GPU 0 (rank 0) / host"))
    on_host = set(np.array(m.cats)[m.cat[m.track == host_track]])
    assert on_host == {"cuda_runtime", "user_annotation"}
    assert [s["name"] for s in m.steps] == [f"ProfilerStep#{i}" for i in range(101, 106)]  # as the bars say
    assert all(0 <= s["start"] < s["end"] <= m.span_us for s in m.steps)


def test_payload_columns_decode_to_the_model(v100):
    m = build_timeline(v100)
    p = to_payload(m)
    ev = p["events"]
    start = np.frombuffer(base64.b64decode(ev["start"]["b64"]), dtype="<f8")
    link = np.frombuffer(base64.b64decode(ev["link"]["b64"]), dtype="<i4")
    names = np.frombuffer(base64.b64decode(ev["name"]["b64"]), dtype="<i4")
    assert ev["n"] == len(start) == len(m) and (start == m.start_us).all() and (link == m.link).all()
    assert len(p["names"]) == len(set(p["names"])) < len(m) / 10, "names are sent once (dictionary)"
    assert p["names"][names[0]] == m.names[m.name[0]]


def test_ranks_get_their_own_gpus_and_cpu_only_has_no_gpu_tree():
    two = load_profile(trace("sampled_rank0.pt.trace.json.gz"))
    two.ranks.update({1: load_profile(trace("sampled_rank1.pt.trace.json.gz")).ranks[1]})
    tree = [n.to_dict() for n in build_timeline(two).tree]
    gpus = labels(tree[0]["children"][1])
    assert any("(rank 0)" in g for g in gpus) and any("(rank 1)" in g for g in gpus)
    cpu = build_timeline(load_profile(trace("cpu_only.pt.trace.json.gz")))
    assert labels(cpu.tree[0].to_dict()) == ["CPU"] and len(cpu) > 0


def test_rocm_trace_links_hip_launches():
    m = build_timeline(load_profile(trace("mi250_rocm.pt.trace.json.gz")))
    linked = np.flatnonzero(m.link >= 0)
    assert len(linked) > 0
    assert any("hip" in m.names[m.name[i]].lower() for i in linked)


def test_dashboard_sections(v100):
    d = dashboard_data(v100, None)["sections"]
    k = d["kernels"]
    assert k["total_us"] == sorted(k["total_us"], reverse=True)
    assert sum(k["count"]) == 4350
    assert d["gpu_activity"]["labels"][0] == "kernel"
    assert len(d["step_time"]["values_ms"]) == 5
    assert d["annotations"]["defaults"] == ["## forward ##", "## backward ##", "## optimizer ##", "ProfilerStep#N"]
    assert "ProfilerStep#N" in d["annotations"]["names"]
    assert d["gpu_util"]["series"][0]["name"] == "algo-1 (mean of 1 GPU)"  # per node; per GPU on demand
    assert d["gpu_util"]["per_gpu"][0]["name"] == "algo-1 GPU 0 (rank 0)"
    assert all(0 <= v <= 100.0001 for v in d["gpu_util"]["series"][0]["v"])
    assert "missing" in d["cpu_util"]
    cpu = dashboard_data(load_profile(trace("cpu_only.pt.trace.json.gz")))["sections"]
    for key in ("gpu_active", "gpu_util", "kernels", "precision", "gpu_activity", "memory_ops"):
        assert cpu[key] == {"missing": NO_GPU}, key
