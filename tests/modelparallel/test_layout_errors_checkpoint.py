"""Rank layouts (SMP's placement formula), bad configurations, and save/resume."""

from __future__ import annotations

from itertools import product

import pytest

from sagelaunch.modelparallel.core.layout import rank_layouts
from tests.modelparallel.cases import PLACEMENTS


def smp_formula(world: int, pp: int, tp: int, placement: str) -> list[dict]:
    """SMP v1 docs: the right-most letter of the placement varies fastest over consecutive ranks."""
    order = {"cluster": "DPT", "spread": "TPD"}.get(placement, placement)
    sizes = {"D": world // (pp * tp), "P": pp, "T": tp}
    rows = []
    for rank in range(world):
        coord, rest = {}, rank
        for letter in reversed(order):
            coord[letter] = rest % sizes[letter]
            rest //= sizes[letter]
        rows.append({"rank": rank, "rdp_rank": coord["D"], "pp_rank": coord["P"], "tp_rank": coord["T"]})
    for row in rows:  # group ranks: position among the group's ascending global ranks
        same = lambda other, keys: all(other[k] == row[k] for k in keys)  # noqa: E731
        row["dp_rank"] = [r["rank"] for r in rows if same(r, ["pp_rank"])].index(row["rank"])
        row["mp_rank"] = [r["rank"] for r in rows if same(r, ["rdp_rank"])].index(row["rank"])
    return rows


def test_smp_doc_tables():
    dpt = smp_formula(8, 2, 2, "DPT")
    assert [(r["rdp_rank"], r["pp_rank"], r["tp_rank"]) for r in dpt] == list(product(range(2), repeat=3))
    ptd = smp_formula(8, 2, 2, "PTD")  # the PTD table of the SMP docs
    assert [(r["rdp_rank"], r["pp_rank"], r["tp_rank"]) for r in ptd] == [
        (0, 0, 0), (1, 0, 0), (0, 0, 1), (1, 0, 1), (0, 1, 0), (1, 1, 0), (0, 1, 1), (1, 1, 1)]
    spread = smp_formula(8, 2, 1, "spread")  # docs: spread, 2 partitions → mp groups [0,4], [1,5], ...
    assert [r["mp_rank"] for r in spread] == [0, 0, 0, 0, 1, 1, 1, 1]


@pytest.mark.parametrize("placement", PLACEMENTS)
def test_world8_layout_equals_smp_formula(placement):
    got = [layout.as_dict() for layout in rank_layouts(8, 2, 2, placement)]
    assert got == smp_formula(8, 2, 2, placement)


def test_live_ranks_and_process_groups_follow_the_layout(world4):
    for rank, res in enumerate(world4):
        for placement in PLACEMENTS:
            live = res["layouts"][placement]
            want = smp_formula(4, 2, 2, placement)[rank]
            assert {k: live[k] for k in want} == want, placement
            layout = rank_layouts(4, 2, 2, placement)[rank]
            for group, members in live["groups"].items():
                assert tuple(members) == layout.groups[group], (placement, group)


@pytest.mark.parametrize("case,world,phrase", [
    ("bad_tp_larger_than_world", 2, "tensor_parallel_degree=4 is larger than the world size 2"),
    ("bad_batch_not_divisible", 2, "batch size 6 along axis 0, which is not divisible by microbatches=4"),
    ("optimizer_before_wrap", 2, "optimizer was created before smp.DistributedModel"),
    ("bad_pp_tp_not_dividing", 4, "= 3 must divide the world size 4"),
    ("bad_only_forward_pipeline", 2, "mp_parameters.pipeline='_only_forward' is not supported by sagelaunch's "
                                     "modelparallel; supported: 'interleaved' or 'simple'"),
    ("bad_delayed_parameter_initialization", 2, "mp_parameters.delayed_parameter_initialization=True with "
                                                "pipeline_parallel_degree=2, sharded_data_parallel_degree=1 is not "
                                                "supported by sagelaunch's modelparallel; supported: with tensor"),
    ("bad_horovod", 2, "horovod not supported by SMP v1 for pytorch; use ddp instead of horovod"),
])
def test_bad_configuration_fails_on_every_rank_with_one_message(case, world, phrase, world2, world4):
    results = world2 if world == 2 else world4
    errors = [r[case]["error"] for r in results]
    assert errors[0] and phrase in errors[0], errors[0]
    assert errors[0].startswith("SMPValidationError")
    assert len(set(errors)) == 1, errors  # the same message on every rank


@pytest.mark.parametrize("case", ["resume_pp2", "resume_tp2"])
def test_resume_continues_bit_for_bit(case, world2):
    for res in (r[case] for r in world2):
        assert "error" not in res, res.get("traceback")
        assert res["first"] == res["second"]  # exact float equality of the losses after resuming
        assert res["params_equal"]
        assert res["user_content"] == {"step": 2}
        assert res["newest"] == "step2_partial\n"
        assert "loads only with the layout it was saved with" in res["other_layout_error"]
    files = world2[0][case]["files"]
    if case == "resume_pp2":
        assert {"model_0_0.pt", "model_1_0.pt", "optimizer_0_0.pt", "optimizer_1_0.pt"} <= set(files)
    else:
        assert {"model_0_0.pt", "model_0_1.pt", "optimizer_0_0.pt", "optimizer_0_1.pt"} <= set(files)
    assert {"user_content.pt", "smp_config.pt"} <= set(files)


@pytest.mark.parametrize("case", ["resume_pp2", "resume_tp2"])
def test_smp_save_and_load_round_trip_partial_and_full(case, world2):
    for rank, res in enumerate(r[case] for r in world2):
        assert "error" not in res, res.get("traceback")
        got = res["save_load"]
        assert got["partial_params_equal"] and got["full_params_equal"] and got["full_file_equal"], (rank, got)
        assert got["next_step_equal"], (rank, got)  # the partial optimizer state continues training exactly
        assert "smp.load: no partial checkpoint" in got["missing_error"]
    suffixes = ["0_0", "1_0"] if case == "resume_pp2" else ["0_0", "0_1"]  # f"{f}_{pp_rank}_{tp_rank}", as SMP names them
    want = [f"{case}_smp_full.pt"] + [f"{case}_smp_{kind}_{s}" for kind in ("model", "optimizer")
                                      for s in suffixes]
    assert world2[0][case]["save_load"]["files"] == sorted(want)  # partial=False: one file, written by rank 0


def test_parameters_without_effect_warn_once_on_rank_zero(world2):
    first, second = (r["comm"]["init_warnings"] for r in world2)
    assert len(first) == 1 and not second, (first, second)
    assert first[0].startswith("SMPIgnoredParameterWarning: smp.init: mp_parameters without effect here: "
                               "optimize='speed'"), first
    assert "active_microbatches" not in first[0]  # honoured: microbatches run one at a time without pipelining


def test_object_communication_between_ranks(world2):
    first, second = (r["comm"] for r in world2)
    assert first["allgather"] == second["allgather"] == [{"rank": 0}, {"rank": 1}]
    assert second["broadcast"] == {"hello": "all"} and second["sent"] == [1, 2, 3]
    assert first["received"] == "back"
