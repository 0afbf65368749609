"""Every parallel layout trains exactly like one process on the whole batch: loss and every gradient of 3
optimizer steps within 1e-5, on an MLP and a tiny Hugging Face RoBERTa classifier (real torchrun ranks)."""

from __future__ import annotations

import functools

import pytest
import torch

from tests.modelparallel import cases
from tests.modelparallel.models import reference_run

TOL = 1e-5

pytestmark = pytest.mark.slow  # real torchrun processes
TRAIN2 = [c for c in cases.WORLD2 if c["kind"] == "train"]
TRAIN4 = [c for c in cases.WORLD4 if c["kind"] == "train"]


@functools.lru_cache(maxsize=None)
def _reference(model: str, n: int, optimizer: str, clip: float | None = None, delayed: bool = False):
    return reference_run(model, 3, n, optimizer, clip, delayed)


def _check_case(case: dict, per_rank: list[dict]) -> None:
    results = [r[case["name"]] for r in per_rank]
    for rank, res in enumerate(results):
        assert "error" not in res, f"rank {rank}: {res.get('error')}\n{res.get('traceback')}"
    layout = results[0]["layout"]
    replicas = layout["rdp"] if case["config"].get("prescaled_batch") else layout["dp"]  # tp ranks share a batch
    config = case["config"]
    clip = config.get("sdp_gradient_clipping", 1.0) if config.get("sharded_data_parallel_degree", 1) > 1 else None
    ref = _reference(case["model"], case["local_batch"] * replicas, case.get("optimizer", "sgd"), clip,
                     config.get("delayed_parameter_initialization", False))
    covered: set[str] = set()
    for rank, res in enumerate(results):
        assert len(res["losses"]) == 3
        for step, (got, want) in enumerate(zip(res["losses"], ref["losses"])):
            assert abs(got - want) <= TOL, f"rank {rank} step {step}: loss {got} != reference {want}"
        for step in range(3):
            grads = res["grads"][step]
            assert grads, f"rank {rank} step {step}: no gradients"
            for name, value in grads.items():
                assert name in ref["grads"][step], f"rank {rank}: unexpected parameter {name}"
                diff = (torch.tensor(value) - ref["grads"][step][name]).abs().max().item()
                assert diff <= TOL, f"rank {rank} step {step}: grad of {name} differs by {diff}"
            covered |= set(grads)
    assert covered == set(ref["grads"][0]), f"parameters without a checked gradient: {set(ref['grads'][0]) - covered}"
    full = results[0]["full_state"]  # model.state_dict(): gathered over tp and pp after the 3 steps
    assert set(full) == set(ref["final_state"])
    for name, value in full.items():
        want = ref["final_state"][name]
        assert list(torch.tensor(value).shape) == list(want.shape), name
        diff = (torch.tensor(value) - want).abs().max().item()
        assert diff <= TOL, f"state_dict()[{name}] differs by {diff}"
    _check_optimizer_state(results[0]["full_optim_state"], ref["opt_state"])
    for rank, res in enumerate(results):
        if case.get("roundtrip"):  # the gathered state_dicts, saved and loaded into a fresh model
            assert res["roundtrip"] == {"losses_equal": True, "params_equal": True}, f"rank {rank}"
    cfg = case["config"]
    for rank, res in enumerate(results):  # torch ≥ 2.13 deprecates DDP's broadcast_buffers: no warning per rank
        assert not [w for w in res["wrap_warnings"] if "broadcast_buffers" in w], res["wrap_warnings"]
    if cfg.get("offload_activations"):
        for rank, res in enumerate(results):
            stats = res["offload_stats"]
            assert stats["max_resident_ahead"] <= cfg.get("activation_loading_horizon", 4), f"rank {rank}: {stats}"
            # what autograd saved inside the model went through the offloader, to host (CPU) memory
            assert stats["packed"] > 0 and stats["host_on_cpu"] == stats["packed"], f"rank {rank}: {stats}"
            # prefetched ahead of backward: also the checkpointed modules' inputs, except a single region per
            # microbatch ("contiguous"), whose backward follows its own forward with nothing ahead to fetch
            if case.get("checkpointing") != "contiguous":
                assert stats["prefetched"] > 0, f"rank {rank}: {stats}"
    if case.get("baseline"):
        _check_saved_activations(case, results, per_rank)
    if case.get("checkpoint_baseline"):
        _check_checkpointed_inputs_offloaded(case, results, per_rank)
    if cfg.get("manual_partition") or case.get("manual_partition"):
        assert results[0]["local_params"] == ["0.weight", "0.bias", "2.weight", "2.bias", "4.weight", "4.bias"]
    if cfg.get("pipeline_parallel_degree", 1) > 1:  # each stage holds only part of the model
        assert all(len(r["grads"][0]) < len(ref["grads"][0]) for r in results)
    if case.get("tensor_parallel"):  # and tensor parallel really sharded weights
        assert all(r["distributed_params"] for r in results)


def _check_saved_activations(case: dict, results: list[dict], per_rank: list[dict]) -> None:
    """Checkpointing and offloading change what autograd keeps for backward, measured with saved_tensors_hooks
    around each step (the worker's count_saved) against the same layout without them (case["baseline"])."""
    offload = case["config"].get("offload_activations")
    for rank, (res, all_cases) in enumerate(zip(results, per_rank)):
        base = all_cases[case["baseline"]]
        assert "error" not in base, base.get("error")
        kept, without = res["saved_bytes"], base["saved_bytes"]
        assert without > 0
        if case.get("checkpointing"):  # the checkpointed regions keep (at most) their inputs
            assert kept <= 0.5 * without, f"rank {rank}: {kept} B kept with checkpointing vs {without} B without"
        if offload and not case.get("checkpointing"):
            # nearly nothing stays with autograd; what it would have kept was packed by the offloader instead
            assert kept <= 0.01 * without, f"rank {rank}: {kept} B kept with offloading vs {without} B without"
            per_step = res["offload_stats"]["packed_bytes"] / len(res["losses"])
            assert per_step + kept >= 0.99 * without, f"rank {rank}: offloaded {per_step} B/step of {without} B"


def _check_checkpointed_inputs_offloaded(case: dict, results: list[dict], per_rank: list[dict]) -> None:
    """Checkpointing + offloading, step by step: what the model keeps with checkpointing alone (the checkpointed
    modules' inputs, case["checkpoint_baseline"]) moves to the host; only what the offloader declines
    (kept_bytes) stays. Without pp the step function's loss runs outside the model and is not counted (SMP
    offloads neither); with pp it runs inside the pipeline, so everything the step saves is counted."""
    pipelined = case["config"].get("pipeline_parallel_degree", 1) > 1
    key = "saved_per_step" if pipelined else "model_saved_per_step"
    for rank, (res, all_cases) in enumerate(zip(results, per_rank)):
        base = all_cases[case["checkpoint_baseline"]]
        assert "error" not in base, base.get("error")
        declined = res["offload_stats"]["kept_bytes"]
        for step, (checkpoint_only, escaped, offloaded) in enumerate(
                zip(base[key], res[key], res["packed_per_step"])):
            where = f"rank {rank} step {step}"
            assert checkpoint_only > 0, where
            assert escaped + declined <= 0.01 * checkpoint_only, f"{where}: {escaped}+{declined} B vs {checkpoint_only} B"
            assert offloaded >= 0.99 * checkpoint_only, f"{where}: offloaded {offloaded} B of {checkpoint_only} B"


def _check_optimizer_state(full: dict, want: dict) -> None:
    """optimizer.state_dict() is the whole model's state, by parameter name, equal to the single process's."""
    assert set(full) == set(want), f"optimizer state names differ: {set(full) ^ set(want)}"
    for name, entry in want.items():
        assert set(full[name]) == set(entry), name
        for key, value in entry.items():
            got = torch.tensor(full[name][key])
            assert list(got.shape) == list(value.shape), f"{name}.{key}"
            diff = (got - value).abs().max().item()
            assert diff <= TOL, f"optimizer state {name}.{key} differs by {diff}"


@pytest.mark.parametrize("case", TRAIN2, ids=[c["name"] for c in TRAIN2])
def test_two_ranks_match_single_process(case, world2):
    _check_case(case, world2)


@pytest.mark.parametrize("case", TRAIN4, ids=[c["name"] for c in TRAIN4])
def test_four_ranks_match_single_process(case, world4):
    _check_case(case, world4)


def test_shard_optimizer_state_holds_about_half_the_state(world2):
    for rank in world2:
        sharded = rank["mlp_dp2_shard_optimizer_state"]["opt_state_bytes"]
        full = rank["mlp_dp2_adam"]["opt_state_bytes"]
        assert 0 < sharded < full
    total = sum(r["mlp_dp2_shard_optimizer_state"]["opt_state_bytes"] for r in world2)
    assert total == world2[0]["mlp_dp2_adam"]["opt_state_bytes"]  # the shards partition the whole state
