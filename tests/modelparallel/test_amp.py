"""SMP's fp16/bf16 modes against plain PyTorch AMP (torch.autocast + GradScaler, fp32 weights, one process, the whole
batch): a tiny GPT-2 (2 layers, hidden 32) trained 4 steps with AdamW and clip_master_grads(1.0), at degree 1 and on
2 ranks (dp, tp, pp, shard_optimizer_state, sharded data parallelism), with real torchrun processes."""

from __future__ import annotations

import pytest

from tests.modelparallel import area

pytestmark = pytest.mark.slow  # torchrun

STEPS = 4
# |loss - AMP reference| over the 4 steps. Measured (every layout below, 2 shared cores): fp16 ≤ 3.8e-4, bf16
# ≤ 2.3e-3 (loss ≈ 4.2). They are two ways of computing in half precision — SMP casts the whole model (layer norms
# and softmax too), autocast keeps those in fp32 — so the gap is bf16's and fp16's rounding, 3x and 2x margin.
LOSS_TOLERANCE = {"fp16": 1e-3, "bf16": 5e-3}
# relative gap of clip_master_grads' total norm to the reference's clip_grad_norm_ (measured: fp16 ≤ 1.2e-3,
# bf16 ≤ 1.2e-2)
NORM_TOLERANCE = {"fp16": 5e-3, "bf16": 3e-2}


def _case(name: str, precision: str, **extra) -> dict:
    return {"name": name, "precision": precision, "steps": STEPS, "config": extra.pop("config", {}), **extra}


WORLD1 = [_case("fp16_degree1", "fp16"), _case("bf16_degree1", "bf16"),
          _case("fp16_degree1_optimizer_backward", "fp16", optimizer_backward=True)]
WORLD2 = [
    _case("fp16_dp2", "fp16"), _case("bf16_dp2", "bf16"),
    _case("fp16_tp2", "fp16", config={"tensor_parallel_degree": 2}),
    _case("bf16_tp2", "bf16", config={"tensor_parallel_degree": 2}),
    _case("fp16_pp2", "fp16", config={"pipeline_parallel_degree": 2, "microbatches": 2}),
    _case("fp16_dp2_shard_optimizer_state_static_scale", "fp16", static_loss_scale=128.0,
          config={"shard_optimizer_state": True, "microbatches": 2}),
    _case("bf16_dp2_shard_optimizer_state", "bf16", config={"shard_optimizer_state": True}),
    # sharded data parallelism also clips to sdp_gradient_clipping (1.0): after unscaling, or fp16 would be off
    _case("fp16_sdp2", "fp16", config={"sharded_data_parallel_degree": 2}),
    _case("bf16_sdp2", "bf16", config={"sharded_data_parallel_degree": 2}),
    # an inf in one tensor-parallel shard's gradient, on rank 1 only, at step 1
    _case("fp16_tp2_overflow", "fp16", overflow_step=1, overflow_rank=1, config={"tensor_parallel_degree": 2}),
    # the same runs saved after 2 steps (smp.save_checkpoint, partial) and resumed by a fresh model and optimizer
    _case("fp16_tp2_overflow_resume", "fp16", overflow_step=1, overflow_rank=1, checkpoint_at=2,
          config={"tensor_parallel_degree": 2}),
    _case("bf16_dp2_shard_optimizer_state_resume", "bf16", checkpoint_at=2, config={"shard_optimizer_state": True}),
    {"name": "grad_scaler_dp2", "grad_scaler": True, "steps": 3, "overflow_step": 1},
]
REFERENCE_CASES = [c["name"] for c in WORLD1 + WORLD2
                   if not any(word in c["name"] for word in ("overflow", "resume", "grad_scaler"))]


GROUP = area.register(__name__, "amp_worker", {1: WORLD1, 2: WORLD2})


@pytest.fixture(scope="module")
def worlds(_launches):
    return {size: _launches.ranks(GROUP, size) for size in (1, 2)}


def _ranks(worlds, name: str) -> list[dict]:
    ranks = worlds[1] if "degree1" in name else worlds[2]
    for rank in ranks:
        assert "error" not in rank[name], rank[name].get("traceback")
    return [rank[name] for rank in ranks]


@pytest.mark.parametrize("name", REFERENCE_CASES)
def test_losses_and_norms_follow_the_pytorch_amp_reference(worlds, name):
    precision = name.split("_")[0]
    for got in _ranks(worlds, name):
        ref = got["reference"]
        assert got["losses"] == pytest.approx(ref["losses"], abs=LOSS_TOLERANCE[precision])
        assert got["norms"] == pytest.approx(ref["norms"], rel=NORM_TOLERANCE[precision])
        assert len({round(x, 3) for x in got["losses"]}) == STEPS  # every step really updated the model
        assert got["scales"] == ref["scales"] and not any(got["overflow"])
        # half-precision compute, fp32 master weights in the optimizer: not fp32 training in disguise
        half = f"torch.{'float16' if precision == 'fp16' else 'bfloat16'}"
        assert got["compute_dtypes"] == [half] and got["inner_is_fp32"]
        if "sdp" in name:  # FSDP2 keeps the sharded parameters in fp32 (they are the masters) and gathers them in half
            assert got["param_dtypes"] == ["torch.float32"] and got["master_dtypes"] == []
        else:  # the model itself is half, the optimizer holds fp32 copies
            assert got["param_dtypes"] == [half] and got["master_dtypes"] == ["torch.float32"]


@pytest.mark.parametrize("name", ["fp16_tp2", "bf16_tp2", "fp16_tp2_overflow"])
def test_tensor_parallel_half_precision_really_shards(worlds, name):
    # GPT-2's fused c_attn (hidden 32 → 96 columns): 48 per rank at tp=2, the whole 96 with dp=2
    assert [got["sharded_shape"] for got in _ranks(worlds, name)] == [[32, 48], [32, 48]]
    assert [got["sharded_shape"] for got in _ranks(worlds, "fp16_dp2")] == [[32, 96], [32, 96]]


def test_an_overflow_on_one_rank_skips_the_step_everywhere_and_halves_the_scale_like_grad_scaler(worlds):
    for got in _ranks(worlds, "fp16_tp2_overflow"):
        ref = got["reference"]
        assert got["overflow"] == [False, True, False, False]  # rank 0's own gradients were finite
        assert got["norms"][1] == -1  # clip_master_grads on an overflowed step, as SMP
        assert got["unchanged_on_overflow"]  # the fp32 master weights were not stepped
        assert got["scales"] == ref["scales"] == [2.0**16, 2.0**15, 2.0**15, 2.0**15]  # torch's GradScaler too
        assert got["losses"] == pytest.approx(ref["losses"], abs=LOSS_TOLERANCE["fp16"])  # both skipped step 1


@pytest.mark.parametrize("name", ["fp16_tp2_overflow", "bf16_dp2_shard_optimizer_state"])
def test_checkpoint_then_resume_reproduces_the_uninterrupted_run_exactly(worlds, name):
    # the fp32 master weights and the loss scaler (halved at step 1 here) travel in the optimizer's partial state
    for uninterrupted, resumed in zip(_ranks(worlds, name), _ranks(worlds, f"{name}_resume")):
        assert resumed["losses"] == uninterrupted["losses"]
        assert resumed["scales"] == uninterrupted["scales"]


def test_smp_amp_grad_scaler_skips_on_every_rank_when_one_rank_overflows(worlds):
    for got in _ranks(worlds, "grad_scaler_dp2"):
        assert got["scales"] == [2.0**16, 2.0**15, 2.0**15]
        assert got["max_diff_to_rank0"] == 0.0  # both replicas skipped step 1: still identical
