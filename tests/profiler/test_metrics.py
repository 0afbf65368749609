"""Dashboard metrics checked against the raw events of the reference traces (parsed here independently)."""

from __future__ import annotations

import gzip
import json
import re

import pytest

from tests.profiler.conftest import TRACES


@pytest.fixture(scope="module")
def v100_raw():
    doc = json.loads(gzip.decompress((TRACES / "v100_rank0.pt.trace.json.gz").read_bytes()))
    return [e for e in doc["traceEvents"] if e.get("ph") == "X"]


@pytest.fixture(scope="module")
def v100(analyses):
    return analyses["v100_rank0.pt.trace.json.gz"]["ranks"]["0"]


def test_kernel_totals_and_top_kernels(v100, v100_raw):
    kernels = [e for e in v100_raw if e["cat"] == "kernel"]
    assert v100["kernels"]["count"] == len(kernels)
    assert v100["kernels"]["total_us"] == pytest.approx(sum(e["dur"] for e in kernels), rel=1e-6)
    by_name: dict[str, float] = {}
    for e in kernels:
        by_name[e["name"]] = by_name.get(e["name"], 0) + e["dur"]
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:10]
    assert [k["name"] for k in v100["top_kernels"]] == [n for n, _ in top]
    assert v100["top_kernels"][0]["total_us"] == pytest.approx(top[0][1], rel=1e-6)
    assert v100["top_kernels"][0]["count"] == sum(1 for e in kernels if e["name"] == top[0][0])


def test_step_time_distribution_from_profiler_steps(v100, v100_raw):
    steps = sorted((e for e in v100_raw if re.match(r"ProfilerStep#\d+$", e["name"])), key=lambda e: e["ts"])
    assert v100["steps"]["count"] == len(steps) == 5
    assert [s["dur_us"] for s in v100["steps"]["steps"]] == pytest.approx([e["dur"] for e in steps], rel=1e-6)
    assert sum(v100["steps"]["histogram"]["counts"]) == 5


def test_gpu_activity_and_memory_operation_distribution(v100, v100_raw):
    for label, cat in (("kernel", "kernel"), ("memcpy", "gpu_memcpy"), ("memset", "gpu_memset")):
        expected = sum(e["dur"] for e in v100_raw if e["cat"] == cat)
        assert v100["gpu_activity"][label]["us"] == pytest.approx(expected, rel=1e-6)
    htod = [e for e in v100_raw if e["name"].startswith("Memcpy HtoD")]
    dtod = [e for e in v100_raw if e["name"].startswith("Memcpy DtoD")]
    assert v100["memory_ops"].get("HtoD", {"count": 0})["count"] == len(htod)
    assert dtod and v100["memory_ops"]["DtoD"]["count"] == len(dtod)
    assert v100["memory_ops"]["DtoD"]["bytes"] == sum(e["args"]["bytes"] for e in dtod)
    assert v100["memory_ops"]["memset"]["count"] == sum(1 for e in v100_raw if e["cat"] == "gpu_memset")


def test_precision_distribution_covers_all_kernel_time(v100, analyses):
    assert sum(v100["precision"].values()) == pytest.approx(v100["kernels"]["total_us"], rel=1e-6)
    assert max(v100["precision"], key=v100["precision"].get) == "FP32"  # an FP32 ResNet-style run (sgemm, float)
    from sagelaunch.profiler.analysis.metrics import PRECISION_PATTERNS

    label = lambda name: next((lab for lab, rx in PRECISION_PATTERNS if rx.search(name)), None)  # noqa: E731
    assert label("ampere_fp16_s16816gemm_fp16_128x128") == "FP16"
    assert label("sm80_xmma_gemm_bf16bf16_bf16f32") == "BF16"
    assert label("cutlass_80_tensorop_s1688gemm_128x256") == "TF32"
    assert label("volta_sgemm_64x64_nt") == "FP32"
    assert label("void permute_2D_lengths_kernel<int>(int, int const*)") == "INT32"
    assert label("cutlass_imma_int8_gemm") == "INT8"


def test_launch_latency_per_kernel_and_annotations(v100):
    launch = v100["launch"]
    assert launch["per_kernel"] and sum(k["count"] for k in launch["per_kernel"]) <= launch["count"]
    assert launch["p50_launch_delay_us"] <= launch["p95_launch_delay_us"] <= launch["max_launch_delay_us"]
    names = {a["name"] for a in v100["annotations"]}
    assert "Optimizer.step#SGD.step" in names
    for a in v100["annotations"]:
        assert sum(a["histogram"]["counts"]) == a["count"]


def test_utilisation_over_time(v100, v100_raw):
    cpu, gpu = v100["cpu"], v100["gpu_utilization"]
    assert 0 < cpu["active_us"] <= cpu["span_us"]
    assert len(cpu["utilization"]["busy_pct"]) == 100
    assert all(0 <= x <= 100.0001 for x in cpu["utilization"]["busy_pct"])
    assert set(gpu) == {"0"}
    busy = gpu["0"]["busy_pct"]
    assert all(0 <= x <= 100.0001 for x in busy) and max(busy) > 50
    # the bins add up to the union of GPU activity, computed here the plain way
    spans = sorted((e["ts"], e["ts"] + e["dur"]) for e in v100_raw if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset"))
    union, cur_s, cur_e = 0.0, *spans[0]
    for s, e in spans[1:]:
        if s > cur_e:
            union, cur_s, cur_e = union + cur_e - cur_s, s, e
        else:
            cur_e = max(cur_e, e)
    union += cur_e - cur_s
    total_busy = sum(busy) / 100 * gpu["0"]["bin_us"]
    assert total_busy == pytest.approx(union, rel=0.001)


def test_numpy_helpers_equal_numpy():
    import numpy as np

    from sagelaunch.profiler.nputil import auto_bin_count, distinct, isin, percentile

    rng = np.random.default_rng(0)
    for _ in range(300):  # bit for bit: durations of many sizes, spreads and roundings
        x = (rng.lognormal(0, 2, int(rng.integers(2, 3000))) * rng.choice([1, 1000])).round(int(rng.integers(0, 4)))
        for q in (0, 5, 25, 50, 75, 90, 95, 99, 100):
            assert percentile(x, q) == np.percentile(x, q)
        if x.max() > x.min():
            assert auto_bin_count(x) == len(np.histogram_bin_edges(x, bins="auto")) - 1
    a = rng.integers(0, 50, 1000)
    assert (distinct(a) == np.unique(a)).all()
    assert (isin(a, [1, 5, 7, 99]) == np.isin(a, [1, 5, 7, 99])).all()
    assert not isin(a, []).any()


def test_name_precision_matches_the_case_insensitive_patterns():
    """The lower-cased fast path gives the label of the re.I patterns, in their order, on every kernel name of the
    test traces and on names that tease case folding and word boundaries."""
    from sagelaunch.profiler.analysis.metrics import PRECISION_PATTERNS, name_precision
    from sagelaunch.profiler.kineto_reader import read_kineto
    from tests.profiler.conftest import TRACES

    names = {n for t in TRACES.glob("*.json.gz") for n in read_kineto(t, cache=False).names}
    names |= {"HGEMM_x", "sGeMm", "Half_kernel", "a half b", "x<Int>", "<int32_t>", "FLOAT", "floaty", "ſgemm",
              "İnt8", "c10::HALF", "K_kelvin_f16_"}
    for name in names:
        expected = next((label for label, rx in PRECISION_PATTERNS if rx.search(name)), "")
        assert name_precision(name) == expected, name
