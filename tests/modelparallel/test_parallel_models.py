"""Real Hugging Face models really sharded: tensor parallelism of GPT-2 (Conv1D, fused q|k|v), Llama (GQA),
GPT-NeoX and GPT-J, alone and with data parallelism; pipeline parallelism of Hugging Face causal LMs (their module
tree: embeddings, the layer stack, the head; GPT-2's tied wte/lm_head on both ends), with tensor parallelism;
sharded data parallelism (FSDP2); delayed parameter initialization (meta device, each rank materialises its
shards). Each case trains 3 steps under torchrun and must match one
process on the whole batch (loss, every gradient, the gathered state_dict within 1e-5) AND hold only its shard:
the local shape of each projection and the number of parameter elements per rank."""

from __future__ import annotations

import pytest

from tests.modelparallel import area
from tests.modelparallel.models import BUILDERS
from tests.modelparallel.test_equivalence import _check_case

pytestmark = pytest.mark.slow  # real torchrun processes

TP2 = {"tensor_parallel_degree": 2, "ddp": True}
SDP2 = {"sharded_data_parallel_degree": 2, "ddp": True}
PP2 = {"pipeline_parallel_degree": 2, "microbatches": 2, "pipeline": "simple"}


def _train(name, model, config, **extra):
    return {"name": name, "kind": "train", "model": model, "config": config, "local_batch": 2, **extra}


WORLD2 = [
    _train("gpt2_tp2", "gpt2", TP2, tensor_parallel="context", optimizer="adam_eps", roundtrip=True),
    _train("llama_tp2", "llama", TP2, tensor_parallel=True),
    _train("neox_tp2", "neox", TP2, tensor_parallel="context"),
    _train("gptj_tp2", "gptj", TP2, tensor_parallel=True),
    _train("gpt2_pp2", "gpt2", PP2, optimizer="adam_eps", roundtrip=True),
    _train("llama_pp2_interleaved", "llama", {**PP2, "pipeline": "interleaved"}),
    _train("gpt2_sdp2", "gpt2", SDP2, optimizer="adam_eps", roundtrip=True),
    # SMP clips the gradients' global norm with sharded data parallelism (default 1.0): a clip that bites
    _train("gpt2_sdp2_mb2_clip", "gpt2", {**SDP2, "microbatches": 2, "sdp_gradient_clipping": 0.05}),
    _train("smp_lm_tp2", "smp_lm", TP2),  # smp.nn layers are distributed without being marked, as SMP's are
    _train("gpt2_tp2_delayed", "gpt2", {**TP2, "delayed_parameter_initialization": True}, tensor_parallel="context"),
    _train("llama_tp2_delayed", "llama", {**TP2, "delayed_parameter_initialization": True}, tensor_parallel=True),
    _train("gpt2_dp2_delayed", "gpt2", {"ddp": True, "delayed_parameter_initialization": True}),
    {"name": "resume_gpt2_sdp2", "kind": "resume", "model": "gpt2", "config": SDP2, "local_batch": 2,
     "optimizer": "adam_eps"},
    {"name": "bad_gpt2_tp2_unmarked", "kind": "bad_model", "model": "gpt2", "config": TP2},
    {"name": "bad_delayed_but_materialised", "kind": "bad_model", "model": "gpt2",
     "config": {"ddp": True, "delayed_parameter_initialization": True}, "materialised": True},
]
WORLD4 = [
    _train("gpt2_tp2_dp2", "gpt2", TP2, tensor_parallel="context", optimizer="adam_eps"),
    _train("llama_tp2_dp2", "llama", {**TP2, "microbatches": 2}, tensor_parallel=True),
    _train("gpt2_sdp2_hybrid", "gpt2", SDP2, optimizer="adam_eps"),  # 2 sharded copies, replicated (HSDP)
    _train("gpt2_pp2_tp2", "gpt2", {**PP2, **TP2}, tensor_parallel="context", optimizer="adam_eps"),
]
TRAIN2 = [c for c in WORLD2 if c["kind"] == "train"]
TP_TRAIN2 = [c for c in TRAIN2 if "tensor_parallel" in c or c["model"] == "smp_lm"]
PP_TRAIN2 = [c for c in TRAIN2 if "pipeline_parallel_degree" in c["config"]]
# what each pipeline stage holds: parameter name prefixes (GPT-2: 2 blocks; Llama: 2 layers)
STAGES = {"gpt2": [("transformer.wte.", "transformer.wpe.", "transformer.h.0."),
                   ("transformer.h.1.", "transformer.ln_f.", "lm_head.")],
          "llama": [("model.embed_tokens.", "model.layers.0."), ("model.layers.1.", "model.norm.", "lm_head.")]}
STAGES["gpt2"][1] += ("transformer.wte.",)  # the last stage's tied lm_head, under the model's first name
SDP_TRAIN = [c for c in TRAIN2 + WORLD4 if "sharded_data_parallel_degree" in c["config"]]

# the local shape (tp=2) of one layer's distributed parameters; from the tiny configs of models.py
SHARDS = {
    "gpt2": {"transformer.wte.weight": [32, 16], "transformer.h.0.attn.c_attn.weight": [16, 24],
             "transformer.h.0.attn.c_attn.bias": [24],
             "transformer.h.0.attn.c_proj.weight": [8, 16], "transformer.h.0.mlp.c_fc.weight": [16, 32],
             "transformer.h.0.mlp.c_proj.weight": [32, 16]},
    "llama": {"model.embed_tokens.weight": [32, 16], "lm_head.weight": [32, 16],
              "model.layers.0.self_attn.q_proj.weight": [8, 16], "model.layers.0.self_attn.k_proj.weight": [4, 16],
              "model.layers.0.self_attn.v_proj.weight": [4, 16], "model.layers.0.self_attn.o_proj.weight": [16, 8],
              "model.layers.0.mlp.gate_proj.weight": [16, 16], "model.layers.0.mlp.down_proj.weight": [16, 16]},
    "neox": {"gpt_neox.embed_in.weight": [32, 16], "lm_head.weight": [32, 16],
             "gpt_neox.layers.0.attention.query_key_value.weight": [24, 16],
             "gpt_neox.layers.0.attention.dense.weight": [16, 8],
             "gpt_neox.layers.0.mlp.dense_h_to_4h.weight": [16, 16],
             "gpt_neox.layers.0.mlp.dense_4h_to_h.weight": [16, 16]},
    "smp_lm": {"word_embedding.weight": [32, 16], "transformer.layers.0.attention.query.weight": [8, 16],
               "transformer.layers.0.attention.dense.weight": [16, 8],
               "transformer.layers.1.output.dense1.weight": [16, 16],
               "transformer.layers.1.output.dense2.weight": [16, 16]},
    "gptj": {"transformer.wte.weight": [32, 16], "lm_head.weight": [32, 16], "lm_head.bias": [32],
             "transformer.h.0.attn.q_proj.weight": [8, 16], "transformer.h.0.attn.out_proj.weight": [16, 8],
             "transformer.h.0.mlp.fc_in.weight": [32, 16], "transformer.h.0.mlp.fc_out.weight": [16, 32]},
}


GROUP = area.register(__name__, "mp_worker", {2: WORLD2, 4: WORLD4})


@pytest.fixture(scope="module")
def hf2(_launches):
    return _launches.ranks(GROUP, 2)


@pytest.fixture(scope="module")
def hf4(_launches):
    return _launches.ranks(GROUP, 4)


def _check_sharded(case: dict, per_rank: list[dict], tp: int = 2) -> None:
    """Every rank holds 1/tp of each distributed parameter and nothing else of them."""
    full = dict(BUILDERS[case["model"]]().named_parameters())
    for rank, results in enumerate(per_rank):
        res = results[case["name"]]
        shapes = res["local_shapes"]
        for name, shape in SHARDS[case["model"]].items():
            assert shapes[name] == shape, f"rank {rank}: {name} is {shapes[name]}, expected the shard {shape}"
            assert name in res["distributed_params"]
        replicated = set(full) - set(res["distributed_params"])  # norms, positions, row-wise biases
        assert all(shapes[n] == list(full[n].shape) for n in replicated), replicated
        sharded = sum(full[n].numel() for n in res["distributed_params"])
        total = sum(p.numel() for p in full.values())
        assert res["local_numel"] == total - sharded + sharded // tp, f"rank {rank} holds {res['local_numel']}"
        assert res["local_grad_numel"] == res["local_numel"]  # gradients as sharded as their parameters
        # smdistributed.modelparallel.torch.utils.get_distribution_axis: the axis this rank holds 1/tp of
        axes = res["distribution_axes"]
        assert all(axes[n] is not None for n in res["distributed_params"])
        assert all(axes[n] is None for n in replicated if n in axes)
        for name, axis in axes.items():
            if axis is not None and name in full:  # a tied alias (lm_head.weight) is its embedding's shard
                assert shapes[name][axis] * tp == full[name].shape[axis], (name, axis)


@pytest.mark.parametrize("case", TP_TRAIN2, ids=[c["name"] for c in TP_TRAIN2])
def test_two_ranks_shard_and_match_single_process(case, hf2):
    _check_case(case, hf2)
    _check_sharded(case, hf2)


def _check_stages(case: dict, per_rank: list[dict]) -> None:
    """Each pipeline rank holds only its stage's parameters (no replica of the whole model)."""
    for results in per_rank:
        res = results[case["name"]]
        stage = STAGES[case["model"]][res["pp_rank"]]
        assert res["local_params"] and all(n.startswith(stage) for n in res["local_params"]), res["local_params"]
        layers = {n.split(".")[2] for n in res["local_params"] if n.startswith(("transformer.h.", "model.layers."))}
        assert layers == {str(res["pp_rank"])}, res["local_params"]


@pytest.mark.parametrize("case", PP_TRAIN2, ids=[c["name"] for c in PP_TRAIN2])
def test_pipeline_stages_hold_their_layers_and_match_single_process(case, hf2):
    _check_case(case, hf2)
    _check_stages(case, hf2)


def test_pipelined_gpt2_ties_wte_and_lm_head_across_stages(hf2):
    # both ends hold the tied matrix; their summed gradients keep the copies equal through Adam steps
    first, last = (r["gpt2_pp2"] for r in hf2)
    assert "transformer.wte.weight" in first["local_params"] and "transformer.wte.weight" in last["local_params"]
    assert first["grads"][2]["transformer.wte.weight"] == last["grads"][2]["transformer.wte.weight"]
    assert first["roundtrip"] == {"losses_equal": True, "params_equal": True}


@pytest.mark.parametrize("case", SDP_TRAIN, ids=[c["name"] for c in SDP_TRAIN])
def test_sharded_data_parallel_holds_half_of_every_parameter(case, hf2, hf4):
    per_rank = hf2 if case in WORLD2 else hf4
    _check_case(case, per_rank)
    total = sum(p.numel() for p in BUILDERS[case["model"]]().parameters())
    for rank, results in enumerate(per_rank):
        res = results[case["name"]]
        assert res["local_shapes"]["transformer.h.0.attn.c_attn.weight"] == [8, 48]  # FSDP2: dim 0 sharded
        assert res["local_shapes"]["transformer.wte.weight"] == [32, 16]
        assert res["local_numel"] * 2 == total, f"rank {rank} holds {res['local_numel']} of {total}"


@pytest.mark.parametrize("name", ["gpt2_tp2", "gpt2_sdp2"])
def test_gpt2_full_state_dict_and_optimizer_roundtrip(name, hf2):
    # the gathered state_dict/optimizer state (fused c_attn back in q|k|v order, FSDP shards joined) loads into a
    # fresh model, which then takes the same next step
    for rank in hf2:
        assert rank[name]["roundtrip"] == {"losses_equal": True, "params_equal": True}


def test_delayed_initialization_matches_degree_one(hf2):
    # the same delayed-init model on one process is the reference (_check_case); the ranks hold only shards
    case = next(c for c in WORLD2 if c["name"] == "gpt2_dp2_delayed")
    _check_case(case, hf2)
    for rank in hf2:
        assert rank["gpt2_tp2_delayed"]["local_shapes"]["transformer.h.1.attn.c_attn.weight"] == [16, 24]
        assert "error" in rank["bad_delayed_but_materialised"]
        assert "already materialised; create it inside `with smp.delay_param_initialization():`" in \
            rank["bad_delayed_but_materialised"]["error"]


def test_sharded_data_parallel_checkpoint_resumes_exactly(hf2):
    # each rank saves its own FSDP shard (model and optimizer, file names end in _{rdp_rank}) and gets it back
    for rank in hf2:
        res = rank["resume_gpt2_sdp2"]
        assert "error" not in res, res.get("traceback")
        assert res["first"] == res["second"] and res["params_equal"]
        assert {"model_0_0_0.pt", "model_0_0_1.pt", "optimizer_0_0_0.pt", "optimizer_0_0_1.pt"} <= \
            set(res["files"]), res["files"]
        assert res["save_load"]["partial_params_equal"] and res["save_load"]["next_step_equal"]
        assert "sharded_data_parallel_degree: saved 2, now 1" in res["other_layout_error"]  # shards: same layout only


def test_tp_that_shards_nothing_is_refused_naming_the_module_types(hf2):
    for rank in hf2:
        error = rank["bad_gpt2_tp2_unmarked"]["error"]
        assert error.startswith("SMPValidationError: tensor_parallel_degree=2, but smp.DistributedModel found "
                                "nothing to distribute in GPT2LMHeadModel"), error
        assert "Conv1D x8" in error and "smp.tensor_parallelism()" in error and "tensor_parallel_degree=1" in error


@pytest.mark.parametrize("case", WORLD4[:2], ids=[c["name"] for c in WORLD4[:2]])
def test_four_ranks_shard_and_match_single_process(case, hf4):
    _check_case(case, hf4)
    _check_sharded(case, hf4)


def test_pipeline_and_tensor_parallel_together(hf4):
    case = WORLD4[3]
    _check_case(case, hf4)
    _check_stages(case, hf4)
    for results in hf4:  # the stage's blocks and the tied vocabulary matrix (both ends) are tp-sharded too
        res = results[case["name"]]
        block = f"transformer.h.{res['pp_rank']}.attn.c_attn.weight"
        assert res["local_shapes"][block] == [16, 24], res["local_shapes"]
        assert res["local_shapes"]["transformer.wte.weight"] == [32, 16]
