"""Pipelining any module tree as SMP v1 does, by module: the MNIST example's two sub-networks with functional ops
between their layers, and a BERT-like model whose encoder is an nn.Sequential nested inside it (embeddings and heads
around it, keyword inputs, a tuple out). At pp=2 (simple and interleaved, 2 and 4 microbatches, auto and manual
partitions) and pp=2 × dp=2 the losses and every stage's parameters equal one process's; each rank holds only its
stages' modules. A model that cannot be split is refused on every rank, naming the modules and what to change."""

from __future__ import annotations

import functools

import pytest
import torch

from sagelaunch.modelparallel.pipeline.tree import balanced_chunks, tree_units
from tests.modelparallel import area
from tests.modelparallel.tree_models import build
from tests.modelparallel.vendored_example import changed_files

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
# the BERT example's own model (its modeling.py, vendored unchanged): a tree whose decoder is tied to the embeddings
EXAMPLE_BERT = [{"name": "example_bert_simple_mb2", "model": "example_bert", "config": _pp("simple", 2)},
                {"name": "example_bert_interleaved_mb4", "model": "example_bert", "config": _pp("interleaved", 4)}]
WORLD2 += EXAMPLE_BERT
# each rank builds the model from its own seed, as the BERT example's script seeds by local rank
RANK_SEEDS = {"name": "example_bert_rank_seeds", "model": "example_bert", "config": _pp("simple", 2),
              "seed_by_rank": True}
WORLD2.append(RANK_SEEDS)
# data parallelism alone (no pipeline): every rank holds the whole tree
DP_ONLY = [{"name": "grouped_dp2", "model": "grouped_net", "config": {"ddp": True}},
           {"name": "bert_dp2", "model": "sequential_bert", "config": {"ddp": True}}]
WORLD2 += DP_ONLY
WORLD4 = [{"name": "grouped_pp2_dp2", "model": "grouped_net", "config": _pp("simple", 2)},
          {"name": "bert_pp2_dp2", "model": "sequential_bert", "config": _pp("interleaved", 2)},
          {"name": "example_bert_pp2_dp2", "model": "example_bert", "config": _pp("interleaved", 2)}]
# pipeline × tensor parallelism of a tree: each stage's marked nn.Sequential Linear pairs split over the tp ranks
TP_TREE = {"name": "two_mlps_pp2_tp2", "model": "two_mlps", "tensor_parallel": ["first", "second"],
           "config": _pp("simple", 2, tensor_parallel_degree=2)}
WORLD4.append(TP_TREE)
STAGE0 = {"bert_manual": {"embeddings", "positions", "encoder.0", "encoder.1"}}
TIED = ("bert.embeddings.word_embeddings.weight", "cls.predictions.decoder.weight")


GROUP = area.register(__name__, "tree_worker", {2: WORLD2, 4: WORLD4})


@pytest.fixture(scope="module")
def worlds(_launches):
    return {size: functools.partial(_launches.ranks, GROUP, size) for size in (2, 4)}


def test_units_follow_the_module_tree_and_stages_balance_parameters():
    assert [n for n, _ in tree_units(build("grouped_net"), 2)] == ["net1", "net2.fc1", "net2.fc2"]
    assert [n for n, _ in tree_units(build("sequential_bert"), 2)] == [
        "embeddings", "positions", "encoder.0", "encoder.1", "encoder.2", "encoder.3", "lm_head", "nsp_head"]
    assert balanced_chunks([4, 1, 1, 2], 2) == [range(0, 1), range(1, 4)]
    assert balanced_chunks([5, 1, 1, 1, 5], 3) == [range(0, 1), range(1, 4), range(4, 5)]


def test_the_bert_examples_model_is_upstreams_text():
    assert changed_files("bert") == []


def _check(results: list[dict], case: dict) -> None:
    name = case["name"]
    reference = results[0][name + "_one_process"]
    last_stage = [r[name]["losses"] for r in results if r[name]["losses"] is not None]  # one per replica
    mean = [sum(step) / len(step) for step in zip(*last_stage)]  # replicas' halves of the batch: the whole batch
    assert last_stage and mean == pytest.approx(reference["losses"], abs=1e-5)
    held: dict[str, int] = {}
    for rank, r in enumerate(results):
        params = r[name]["params"]
        if case["config"].get("pipeline_parallel_degree", 1) > 1:
            assert params and set(params) < set(reference["params"])  # a part of the model, not all of it
        else:
            assert set(params) == set(reference["params"])  # data parallelism alone: a whole replica
        for param, value in params.items():
            if case.get("tensor_parallel"):
                continue  # shards: _check_tp_shards
            assert torch.allclose(torch.tensor(value), torch.tensor(reference["params"][param]), atol=1e-5), param
            held[param] = held.get(param, 0) + 1
    assert set(held) == set(reference["params"]) or case.get("tensor_parallel")  # together the whole model
    if case["model"] == "example_bert":  # the tie across the stages: embeddings on the first, decoder on the last
        holders = [[rank for rank, r in enumerate(results) if name_ in r[name]["params"]] for name_ in TIED]
        first, last = holders
        assert first and last and not set(first) & set(last), holders
    if name in STAGE0:  # smp.set_partition placed these modules, and only these, on stage 0
        units = {next(u for u in STAGE0[name] if p.startswith(u + ".")) for p in results[0][name]["params"]
                 if any(p.startswith(u + ".") for u in STAGE0[name])}
        assert units == STAGE0[name] and len(units) and all(
            any(p.startswith(u + ".") for u in STAGE0[name]) for p in results[0][name]["params"])


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in WORLD2 if c["name"] not in ("bert_manual_bad", "residual", "branch")
                                  and c not in DP_ONLY and c is not RANK_SEEDS],
                         ids=lambda c: c["name"])
def test_two_stages_match_one_process(worlds, case):
    _check(worlds[2](), case)


@pytest.mark.slow
@pytest.mark.parametrize("case", [c for c in WORLD4 if c is not TP_TREE], ids=lambda c: c["name"])
def test_two_stages_times_two_replicas_match_one_process(worlds, case):
    results = worlds[4]()
    _check(results, case)
    assert sorted(r[case["name"]]["dp_rank"] for r in results) == [0, 0, 1, 1]


@pytest.mark.slow
@pytest.mark.parametrize("case", DP_ONLY, ids=lambda c: c["name"])
def test_data_parallelism_alone_trains_a_tree_like_one_process(worlds, case):
    results = worlds[2]()
    _check(results, case)
    assert sorted(r[case["name"]]["dp_rank"] for r in results) == [0, 1]


@pytest.mark.slow
def test_a_tie_across_stages_is_one_value_when_the_ranks_draw_different_weights(worlds):
    results = [r[RANK_SEEDS["name"]]["params"] for r in worlds[2]()]
    reference = worlds[2]()[0][RANK_SEEDS["name"] + "_one_process"]["params"]  # seed 0: rank 0's draws
    (first,) = [p for p in results if TIED[0] in p]
    (last,) = [p for p in results if TIED[1] in p]
    assert first is not last and torch.equal(torch.tensor(first[TIED[0]]), torch.tensor(last[TIED[1]]))
    # the last stage's own modules kept rank 1's draws (trained from them, they differ from seed 0's run)
    assert not torch.allclose(torch.tensor(last["cls.seq_relationship.weight"]),
                              torch.tensor(reference["cls.seq_relationship.weight"]), atol=1e-3)


def _check_tp_shards(results: list[dict], case: dict) -> None:
    """Each marked Linear pair is split over the tp ranks of its stage (different halves, which put together equal
    one process's parameter); the head and the row-parallel bias are whole on both."""
    reference = results[0][case["name"] + "_one_process"]["params"]
    split = 0
    for param, full in reference.items():
        held = sorted((r[case["name"]]["tp_rank"], torch.tensor(r[case["name"]]["params"][param]))
                      for r in results if param in r[case["name"]]["params"])
        assert [tp for tp, _ in held] == [0, 1], (param, [tp for tp, _ in held])  # one stage's two tp ranks
        full_t, (a, b) = torch.tensor(full), (t for _, t in held)
        if a.shape == full_t.shape:
            # the row-parallel Linear's bias is added once, after the reduction: whole on both ranks
            assert param in ("head.weight", "head.bias", "first.2.bias", "second.2.bias"), f"{param}: kept whole"
            assert torch.allclose(a, full_t, atol=1e-5) and torch.allclose(b, full_t, atol=1e-5), param
            continue
        dim = next(d for d in range(a.dim()) if a.shape[d] != full_t.shape[d])
        assert a.shape[dim] * 2 == full_t.shape[dim] and not torch.equal(a, b), param
        assert torch.allclose(torch.cat([a, b], dim), full_t, atol=1e-5), param
        split += 1
    assert split >= 6, split  # both pairs' Linears: column-parallel weight and bias, row-parallel weight


@pytest.mark.slow
def test_a_tree_pipelined_and_tensor_parallel_matches_one_process(worlds):
    results = worlds[4]()
    _check(results, TP_TREE)
    _check_tp_shards(results, TP_TREE)
    modules = sorted((r[TP_TREE["name"]]["pp_rank"], r[TP_TREE["name"]]["tp_rank"],
                      sorted({p.split(".")[0] for p in r[TP_TREE["name"]]["params"]})) for r in results)
    assert modules == [(0, 0, ["first"]), (0, 1, ["first"]), (1, 0, ["head", "second"]), (1, 1, ["head", "second"])]


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
