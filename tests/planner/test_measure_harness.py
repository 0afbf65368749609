"""The measurement harness the planner is checked against (scripts/planner_measure.py) proves itself: its tracker's
parameter bytes per rank equal the bytes of the rank's own parameter shards, and those shards are what tensor and
pipeline parallelism should leave on the rank (halves of the full weights; each pipeline stage its own layers)."""

from __future__ import annotations

import math

import pytest
import torch

from scripts import planner_measure as pm

TP_CASE, PP_CASE = "gpt2_w2_tp2_pp1_mb1_fp32", "llama_w2_tp1_pp2_mb4_fp32"
DDP_CASE = "bert_w2_tp1_pp1_mb1_fp32"


def test_the_configurations_cover_every_dimension_the_issue_names():
    cases = pm.cases()
    assert len(cases) >= 24 and len({c["name"] for c in cases}) == len(cases)
    lays = [c["layout"] for c in cases]
    assert {c["family"] for c in cases} == {"gpt2", "bert", "llama"}
    assert {lay["tp"] for lay in lays} == {1, 2} and {lay["pp"] for lay in lays} == {1, 2}
    assert {lay["mb"] for lay in lays} == {1, 4} and {lay["bf16"] for lay in lays} == {False, True}
    assert {lay["sop"] for lay in lays} == {False, True} and {lay["ckpt"] for lay in lays} == {False, True}
    assert {lay["sdp"] for lay in lays} >= {1, 2} and max(lay["world"] for lay in lays) <= 4
    for lay in lays:
        assert lay["world"] % (lay["tp"] * lay["pp"]) == 0


def _full_shapes(family: str) -> dict[str, list[int]]:
    import transformers

    with torch.device("meta"):
        model = getattr(transformers, pm.MODEL_CLASSES[family])(pm.transformers_config(family))
    return {n: list(p.shape) for n, p in model.named_parameters()}


def _own_bytes(record) -> int:
    """The rank's parameter shards, by shape: fp32, a tied weight once (named_parameters lists it once)."""
    return sum(math.prod(shape) for shape in record.local_parameter_shapes.values()) * 4


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    wanted = [c for c in pm.cases() if c["name"] in (TP_CASE, PP_CASE, DDP_CASE)]
    run = pm.measure(wanted, tmp_path_factory.mktemp("planner_measure"), timeout=600)
    return {name: sorted((r for r in run.records if r.config.name == name), key=lambda r: r.rank)
            for name in (TP_CASE, PP_CASE, DDP_CASE)}


@pytest.mark.slow
def test_tensor_parallel_ranks_hold_halves_and_the_tracker_counts_exactly_them(measured):
    full = _full_shapes("gpt2")
    ranks = measured[TP_CASE]
    assert [r.tp_rank for r in ranks] == [0, 1] and ranks[0].config.tp == 2
    halved = set()
    for r in ranks:
        assert set(r.local_parameter_shapes) == set(full)
        for name, shape in r.local_parameter_shapes.items():
            if shape != full[name]:  # a tp shard: one dimension halved, the rest whole
                diff = [i for i, (a, b) in enumerate(zip(shape, full[name])) if a != b]
                assert len(diff) == 1 and shape[diff[0]] * 2 == full[name][diff[0]], name
                halved.add(name)
        assert r.parameter_bytes == _own_bytes(r) == r.parameter_numel * 4
        assert r.gradient_bytes == r.parameter_bytes  # fp32 gradients of exactly those shards
    for part in ("attn.c_attn.weight", "attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight", "wte.weight"):
        assert any(n.endswith(part) for n in halved), part
    whole = sum(math.prod(s) for s in full.values()) * 4
    assert ranks[0].parameter_bytes < 0.75 * whole  # most of the model is split


@pytest.mark.slow
def test_pipeline_stages_hold_their_own_layers_and_the_tracker_counts_exactly_them(measured):
    full = _full_shapes("llama")
    first, last = measured[PP_CASE]
    assert (first.pp_rank, last.pp_rank) == (0, 1)
    layers = {r.pp_rank: {n.split(".layers.")[1].split(".")[0] for n in r.local_parameter_shapes if ".layers." in n}
              for r in (first, last)}
    # two layers each, none on both ("interleaved", SMP's default schedule, deals them out in turn: 0 2 | 1 3)
    assert len(layers[0]) == len(layers[1]) == 2 and layers[0] | layers[1] == {"0", "1", "2", "3"}
    assert any("embed_tokens" in n for n in first.local_parameter_shapes)
    assert any("lm_head" in n for n in last.local_parameter_shapes)
    assert set(first.local_parameter_shapes) | set(last.local_parameter_shapes) >= set(full)
    for r in (first, last):
        for name, shape in r.local_parameter_shapes.items():
            assert shape == full[name], name  # a stage holds its layers whole
        assert r.parameter_bytes == _own_bytes(r) == r.parameter_numel * 4
        assert r.optimizer_state_bytes == r.optimizer_state_check_bytes  # Adam's moments + step of the stage
        assert r.peak_bytes >= r.parameter_bytes + r.optimizer_state_bytes + r.activation_peak_bytes // 4


@pytest.mark.slow
def test_a_peak_inside_backward_already_counts_ddps_bucket(measured):
    """DDP's bucket is made before the measured step; the tracker counts it from the reducer's first copy into it,
    so the peak (inside backward here) holds it and a comparison must not add it again."""
    for r in measured[DDP_CASE]:
        assert r.ddp_bucket_bytes == r.parameter_bytes  # fp32, one bucket holds every gradient of this small model
        assert r.ddp_bucket_bytes_in_peak == r.ddp_bucket_bytes
        assert r.peak_breakdown["Temp"] >= r.ddp_bucket_bytes  # filed as a temporary of backward
    for r in measured[TP_CASE] + measured[PP_CASE]:  # no DDP: all DTensors, or a pipeline
        assert r.ddp_bucket_bytes == r.ddp_bucket_bytes_in_peak == 0
