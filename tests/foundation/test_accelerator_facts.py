"""The planner's hardware and price facts: every accelerated training type has them, each with a page and a date."""

from __future__ import annotations

from datetime import date

import pytest

from sagelaunch.jobspec import accelerators as acc
from sagelaunch.jobspec import catalog
from sagelaunch.jobspec.errors import SagelaunchError

FAMILIES = ("p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en", "g4dn", "g5", "g6", "trn1", "trn1n")


def test_every_gpu_and_trainium_training_type_has_facts():
    accelerated = [t for t in catalog.training_instance_types()
                   if catalog.instance_info(t)["kind"] in ("gpu", "trainium")]
    assert sorted(accelerated) == sorted(acc.accelerated_instance_types())
    families = {catalog.instance_family(t) for t in accelerated}
    assert set(FAMILIES) <= families
    for t in accelerated:
        facts = acc.accelerator_facts(t)
        info = catalog.instance_info(t)
        assert facts.count == info.get("gpus") or facts.count == info.get("accelerators")
        assert facts.memory_bytes == (info.get("gpu_memory_gib") or info["accelerator_memory_gib"]) * 2**30


def test_every_figure_names_a_page_and_the_date_it_was_read():
    for t in acc.accelerated_instance_types():
        f = acc.accelerator_facts(t)
        given = {"peak_flops": f.peak_flops or None, "hbm_bandwidth": f.hbm_bandwidth,
                 "intra_node_bandwidth": f.intra_node_bandwidth, "inter_node_bandwidth": f.inter_node_bandwidth}
        assert set(f.sources) == {k for k, v in given.items() if v is not None}, t
        for s in f.sources.values():
            assert s.url.startswith("https://") and s.read_on <= date.today()
        assert f.memory_source.split(":")[0] in ("sdk", "aws")


def test_values_are_sane():
    for t in acc.accelerated_instance_types():
        f = acc.accelerator_facts(t)
        assert 8 * 2**30 <= f.memory_bytes <= 200 * 2**30
        assert set(f.peak_flops) <= set(acc.PRECISIONS)
        for p, flops in f.peak_flops.items():
            assert 5e12 <= flops <= 2.5e15, (t, p)
        if "fp32" in f.peak_flops and "bf16" in f.peak_flops:  # tensor cores beat plain fp32
            assert f.peak_flops["bf16"] >= f.peak_flops["fp32"]
        assert f.hbm_bandwidth is None or 2e11 <= f.hbm_bandwidth <= 6e12
        assert f.intra_node_bandwidth is None or 1e11 <= f.intra_node_bandwidth <= 2e12
        assert f.inter_node_bandwidth is None or 1e9 <= f.inter_node_bandwidth <= 4.5e11


def test_the_figures_planners_lean_on():
    p4d, p4de, p5 = (acc.accelerator_facts(t) for t in ("ml.p4d.24xlarge", "ml.p4de.24xlarge", "ml.p5.48xlarge"))
    assert p4d.peak_flops["bf16"] == 312e12 and "fp8" not in p4d.peak_flops  # A100 has no fp8
    assert p4d.hbm_bandwidth == 1555e9 and p4de.hbm_bandwidth == 2039e9
    assert p4d.inter_node_bandwidth == 400e9 / 8 and p5.inter_node_bandwidth == 3200e9 / 8
    assert p5.peak_flops["bf16"] == pytest.approx(989.4e12) and p5.intra_node_bandwidth == 900e9
    v100 = acc.accelerator_facts("ml.p3dn.24xlarge")
    assert "bf16" not in v100.peak_flops and v100.peak_flops["fp16"] == 125e12
    trn = acc.accelerator_facts("ml.trn1.32xlarge")
    assert (trn.count, trn.hbm_bandwidth, trn.inter_node_bandwidth) == (16, 820 * 2**30, 800e9 / 8)


def test_unknown_and_cpu_types_are_refused_with_did_you_mean():
    with pytest.raises(SagelaunchError) as e:
        acc.accelerator_facts("ml.p4d.24xlarg")
    assert e.value.field == "instance_type" and "'ml.p4d.24xlarge'" in e.value.fix
    with pytest.raises(SagelaunchError) as e:
        acc.accelerator_facts("ml.m5.xlarge")
    assert "ml.p5.48xlarge" in e.value.allowed
    with pytest.raises(SagelaunchError) as e:
        acc.training_price("ml.p5.48xlarg", "us-east-1")
    assert "'ml.p5.48xlarge'" in e.value.fix
    with pytest.raises(SagelaunchError) as e:
        acc.training_price("ml.p5.48xlarge", "us-east-l")
    assert e.value.field == "region"


def test_a_price_no_stored_page_gave_is_unknown_and_a_recorded_one_is_typed(monkeypatch):
    assert acc.training_price("ml.p4d.24xlarge", "us-east-1") is None
    assert "no price is recorded" in catalog.matrix()["training_prices"]["_source"]
    recorded = {"us-west-2": {"ml.p4d.24xlarge": {"usd_per_hour": 1.0, "source": "a page", "read_on": "2026-12-07"}}}
    monkeypatch.setitem(catalog.matrix()["training_prices"], "prices", recorded)
    price = acc.training_price("ml.p4d.24xlarge", "us-west-2")
    assert price is not None and (price.usd_per_hour, price.read_on) == (1.0, date(2026, 12, 7))
    assert acc.training_price("ml.p4d.24xlarge", "us-east-1") is None
