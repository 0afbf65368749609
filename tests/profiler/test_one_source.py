"""One source of numbers: on every reference trace, `profile analyze` text, `profile analyze --json`, the report's
embedded data and its CPU/annotation sections print the same figure for the same quantity.

(The profile browser serves the report's data unchanged; tests/profiler_ui/test_views_browser.py reads the
figures off the page.)"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from tests.profiler.conftest import BARE_ENV

REPO = Path(__file__).resolve().parents[2]
TRACES = sorted((REPO / "tests" / "data" / "traces").glob("*.json.gz"))
ENV = {**BARE_ENV, "COLUMNS": "120"}


def cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "sagelaunch.profiler.cli", *args], capture_output=True, text=True, env=ENV,
                         timeout=300, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return out.stdout


def report_data(html: str) -> dict:
    m = re.search(r'<script id="dashboard-data" type="application/json">(.*?)</script>', html, re.S)
    return json.loads(m.group(1).replace("<\\/", "</"))


@pytest.mark.parametrize("trace", TRACES, ids=[t.name.split(".")[0] for t in TRACES])
def test_cli_json_and_report_agree(trace, tmp_path):
    doc = json.loads(cli("analyze", str(trace), "--json"))
    text = cli("analyze", str(trace))
    cli("report", str(trace), "-o", str(tmp_path / "r.html"))
    data = report_data((tmp_path / "r.html").read_text())

    figures = doc["figures"]
    assert figures, "every reference trace has headline figures"
    for f in figures:
        assert f"{f['label']}: {f['text']}" in text, f["key"]  # the CLI prints the figure as computed
    assert data["figures"] == figures  # the report (and the browser, which serves the same data)
    assert data["findings"] == doc["findings"]

    # CPU: the pie draws the figure the CLI prints, and its source line says which window it covers
    cpu = data["sections"]["cpu_active"]
    busy = [f for f in figures if f["key"] == "cpu_busy_trace"]
    if busy and "missing" not in cpu:
        assert cpu["values"][0] == pytest.approx(sum(f["value"] for f in busy))
        assert busy[0]["text"] in cpu["source"] and "CPU span" in cpu["source"]

    # annotations: one grouping (CPU-side and GPU-side spans apart), the same counts in JSON and report
    ann = data["sections"]["annotations"]
    for rank in doc["ranks"].values():
        for a in rank["annotations"]:
            if len(doc["ranks"]) == 1:
                assert ann["counts"][a["name"]] == a["count"], a["name"]
            assert a["side"] == ("GPU" if a["name"].endswith(" (GPU)") else "CPU")

    # kernel time vs GPU span: different windows, and the label says why one can exceed the other
    labels = {f["key"]: f["label"] for f in figures}
    if "kernel_time" in labels:
        assert "exceeds the GPU span when kernels on several streams overlap" in labels["kernel_time"]


def test_v100_figures_fix_the_disagreements_of_the_issue():
    from tests.profiler.conftest import analysis_json

    doc = analysis_json(REPO / "tests" / "data" / "traces" / "v100_rank0.pt.trace.json.gz")
    fig = {f["key"]: f for f in doc["figures"]}
    assert fig["cpu_busy_trace"]["text"] == "447.0 ms of 495.0 ms (90.3%)"  # operators, not annotation spans
    assert fig["kernel_time"]["value"] > fig["gpu_span"]["value"]  # 468.2 vs 384.6 ms: overlapping streams
    bw = {a["name"]: a for a in doc["ranks"]["0"]["annotations"]}
    assert bw["## backward ##"]["count"] == 5 and bw["## backward ## (GPU)"]["count"] == 5  # not 10 mixed
    precision = doc["ranks"]["0"]["precision"]
    assert precision.get("unknown", 0) < 0.01 * sum(precision.values())  # cuDNN's scudnn kernels are FP32
    sampled = analysis_json(REPO / "tests" / "data" / "traces" / "sampled_rank0.pt.trace.json.gz")["ranks"]["0"]["precision"]
    assert "INT8" not in list(sampled)[:1] and list(sampled)[0] == "communication"  # NCCL …Sum_int8_t


@pytest.mark.parametrize("values_ms", [
    [95.5, 95.6, 95.7, 20.0, 63.0],  # v100's steps: few, spread
    [1.0] * 50,  # all equal: one bin
    list(range(1, 10_001)),  # many
    [0.012, 0.013, 0.011, 0.5],  # µs-scale with an outlier
])
def test_histogram_bins_are_round_and_cover_every_value(values_ms):
    import numpy as np

    from sagelaunch.profiler.analysis.metrics import MAX_HIST_BINS, histogram

    h = histogram(np.asarray(values_ms) * 1e6)
    edges, counts = np.asarray(h["edges_us"]), h["counts"]
    assert sum(counts) == len(values_ms) and 1 <= len(counts) <= MAX_HIST_BINS
    assert edges[0] <= min(values_ms) * 1e3 and edges[-1] >= max(values_ms) * 1e3
    widths = np.diff(edges)
    assert np.allclose(widths, widths[0])
    if len(set(values_ms)) > 1:  # 1, 2 or 5 × 10^k µs, so axis labels read well
        mantissa = widths[0] / 10 ** np.floor(np.log10(widths[0]))
        assert min(abs(mantissa - m) for m in (1, 2, 5, 10)) < 1e-6, widths[0]
