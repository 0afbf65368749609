"""launch_bound decides host-bound as HTA does, on real host-bound training loops (param, HTA) and a contrast whose host
is far ahead of the GPU: its evidence is HTA 0.5's idle-time breakdown and queue length for the trace."""

from __future__ import annotations

import pytest

from sagelaunch.profiler.analysis import analyze
from tests.profiler.conftest import TRACES

HOST_BOUND = ["param_rtx2080ti_linear_training_loop.pt.trace.json.gz", "hta_gp100_tiny_training_loop.pt.trace.json.gz"]
CONTRAST = "param_resnet_host_ahead.pt.trace.json.gz"


def _launch_bound(name: str):
    return [f for f in analyze(TRACES / name).findings if f.rule == "launch_bound"]


@pytest.mark.parametrize("name", HOST_BOUND)
def test_fires_with_htas_idle_breakdown_and_queue_length(name, hta_reference):
    (f,) = _launch_bound(name)
    ref = hta_reference[name]["ranks"]["0"]
    streams = ref["idle_breakdown"]
    for category in ("host_wait", "kernel_wait", "other"):
        hta_ms = sum(s.get(f"{category}_us", 0.0) for s in streams.values()) / 1e3
        assert f.evidence[f"idle_{category}_ms"] == pytest.approx(hta_ms, abs=1e-3), category
    queue = ref["queue"][str(f.evidence["stream"])]
    assert f.evidence["mean_queue_length"] == pytest.approx(queue["mean"], abs=1e-3)
    assert f.evidence["mean_queue_length"] < 1 and f.evidence["idle_host_wait_share"] > 0.95
    assert "reduce-overhead" in f.fix and "torch.optim.SGD(..., fused=True)" in f.fix  # both loops step SGD
    assert "batch size" in f.fix


def test_does_not_fire_when_the_host_is_ahead(hta_reference):
    assert _launch_bound(CONTRAST) == []
    assert hta_reference[CONTRAST]["ranks"]["0"]["queue"]["7"]["mean"] > 100  # HTA: ~147 launches queued
