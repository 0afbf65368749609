"""Pipelining any module tree as SMP v1 does, by module: the MNIST example's two sub-networks with functional ops
between their layers, and a BERT-like model whose encoder is an nn.Sequential nested inside it (embeddings and heads
around it, keyword inputs, a tuple out). At pp=2 (simple and interleaved, 2 and 4 microbatches, auto and manual
partitions) and pp=2 × dp=2 the losses and every stage's parameters equal one process's; each rank holds only its
stages' modules. A model that cannot be split is refused on every rank, naming the modules and what to change."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from sagelaunch.modelparallel.pipeline.tree import balanced_chunks, tree_units
from tests.modelparallel.launch import launched_worlds
from tests.modelparallel.tree_models import build

WORKER = Path(__file__).with_name("tree_worker.py")


def _pp(schedule: str, microbatches: int, **extra) -> dict:
    return {"pipeline_parallel_degree": 2, "microbatches": microbatches, "pipeline": schedule, "ddp": True, **extra}


MANUAL = {"auto_partition": False, "default_partition": 0}
WORLD2 = [
    {"name": "grouped_simple_mb2", "model": "grouped_net", "config": _pp("simple", 2)},
    {"name": "grouped_interleaved_mb4", "model": "grouped_net", "config": _pp("interleaved", 4)},
    {"name": "bert_simple_mb2", "model": "sequential_bert", "config": _pp("simple", 2)},
    {"name": "bert_interleaved_mb4", "model": "sequential_bert", "config": _pp("interleaved", 4)},
    {"name": "bert_manual", "model": "sequential_bert", "config": _pp("simple", 2, **MANUAL),
     "partition": {"encoder.2": 1, "encoder.3": 1, "lm_head": 1, "nsp_head": 1}},
    {"name": "bert_manual_bad", "model": "sequential_bert", "config": _pp("simple", 2, **MANUAL),
     "partition": {"nsp_head": 1}},
    {"name": "residual", "model": "residual_across", "config": _pp("simple", 2)},
    {"name": "branch", "model": "branch_on_values", "config": _pp("simple", 2)},
]
WORLD4 = [{"name": "grouped_pp2_dp2", "model": "grouped_net", "config": _pp("simple", 2)},
          {"name": "bert_pp2_dp2", "model": "sequential_bert", "config": _pp("interleaved", 2)}]
STAGE0 = {"bert_manual": {"embeddings", "positions", "encoder.0", "encoder.1"}}


@pytest.fixture(scope="module")
def worlds(tmp_path_factory):
    with launched_worlds(tmp_path_factory, "tree_world", {2: WORLD2, 4: WORLD4}, worker=WORKER,
                         timeout=400) as waits:
        yield waits


def test_units_follow_the_module_tree_and_stages_balance_parameters():
    assert [n for n, _ in tree_units(build("grouped_net"), 2)] == ["net1", "net2.fc1", "net2.fc2"]
    assert [n for n, _ in tree_units(build("sequential_bert"), 2)] == [
        "embeddings", "positions", "encoder.0", "encoder.1", "encoder.2", "encoder.3", "lm_head", "nsp_head"]
    assert balanced_chunks([4, 1, 1, 2], 2) == [range(0, 1), range(1, 4)]
    assert balanced_chunks([5, 1, 1, 1, 5], 3) == [range(0, 1), range(1, 4), range(4, 5)]


def _check(results: list[dict], case: dict) -> None:
    name = case["name"]
    reference = results[0][name + "_one_process"]
    last_stage = [r[name]["losses"] for r in results if r[name]["losses"] is not None]  # one per replica
    mean = [sum(step) / len(step) for step in zip(*last_stage)]  # replicas' halves of the batch: the whole batch
    assert last_stage and mean == pytest.approx(reference["losses"], abs=1e-5)
    held: dict[str, int] = {}
    for rank, r in enumerate(results):
        params = r[name]["params"]
        assert params and set(params) < set(reference["params"])  # a part of the model, not all of it
        for param, value in params.items():
            assert torch.allclose(torch.tensor(value), torch.tensor(reference["params"][param]), atol=1e-5), param
            held[param] = held.get(param, 0) + 1
    assert set(held) == set(reference["params"])  # the stages together hold the whole model
    if name in STAGE0:  # smp.set_partition placed these modules, and only these, on stage 0
        units = {next(u for u in STAGE0[name] if p.startswith(u + ".")) for p in results[0][name]["params"]
                 if any(p.startswith(u + ".") for u in STAGE0[name])}
        assert units == STAGE0[name] and len(units) and all(
            any(p.startswith(u + ".") for u in STAGE0[name]) for p in results[0][name]["params"])


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in WORLD2 if c["name"] not in ("bert_manual_bad", "residual", "branch")],
                         ids=lambda c: c["name"])
def test_two_stages_match_one_process(worlds, case):
    _check(worlds[2](), case)


@pytest.mark.slow
@pytest.mark.parametrize("case", WORLD4, ids=lambda c: c["name"])
def test_two_stages_times_two_replicas_match_one_process(worlds, case):
    results = worlds[4]()
    _check(results, case)
    assert sorted(r[case["name"]]["dp_rank"] for r in results) == [0, 0, 1, 1]


@pytest.mark.slow
@pytest.mark.parametrize(("case", "named"), [
    ("bert_manual_bad", "a stage cannot start at nsp_head"),
    ("residual", "no stage can start at ['b']"),
    ("branch", "no stage can start at ['b', 'c']"),
])
def test_a_model_that_cannot_be_split_there_is_refused_on_every_rank_by_module(worlds, case, named):
    errors = [r[case]["error"] for r in worlds[2]()]
    assert len(set(errors)) == 1 and named in errors[0], errors
    assert "smp.partition" in errors[0] or "lower pipeline_parallel_degree" in errors[0]
