"""The planner against real code and published figures: transformers' own models (parameter shapes on the meta
device), SMP's reference configurations (accepted; 30B at tp 8 without optimizer sharding refused), Megatron-LM's
Table 1 (one efficiency fitted on one row, the others predicted within ±25 %) and its tensor-versus-pipeline
finding, bad input in the family's error."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.planner.hardware import hardware
from sagelaunch.planner.layout import Layout
from sagelaunch.planner.memory import stage_tensors
from sagelaunch.planner.models import model_from_config, model_from_dims
from sagelaunch.planner.plan import lower_bound, plan, smallest_changes
from sagelaunch.planner.published import PublishedRun, fit_efficiency, predicted_tflops
from sagelaunch.planner.search import search

DATA = Path(__file__).resolve().parents[1] / "data" / "planner"
P4D = "ml.p4d.24xlarge"


def smp_gpt2(billions: int):
    """SMP v1's reference GPT-2 models (developer guide, model-parallel best practices; seq 512, vocab 50k): the
    GPT-2 notebook's 30B is h 7168, L 48, a 64; 10B and 60B keep its shape family."""
    dims = {10: (5120, 32, 40), 30: (7168, 48, 64), 60: (8192, 72, 64)}[billions]
    return model_from_dims("gpt2", hidden=dims[0], layers=dims[1], heads=dims[2], vocab=50264, seq_len=512,
                           max_positions=1024)


def test_parameter_counts_match_the_published_models():
    assert model_from_dims("gpt2", layers=12, hidden=768, heads=12, vocab=50257, seq_len=1024).parameters == 124_439_808
    assert model_from_dims("llama", layers=32, hidden=4096, heads=32, kv_heads=8, ffn=14336, vocab=32000,
                           seq_len=4096).parameters == 7_241_732_096  # Mistral-7B
    assert model_from_dims("bert", layers=12, hidden=768, heads=12, vocab=30522, seq_len=512,
                           max_positions=512).parameters == 109_483_778  # bert-base, sequence classification


TINY = {
    "GPT2LMHeadModel": {"model_type": "gpt2", "n_layer": 4, "n_embd": 64, "n_head": 4, "vocab_size": 128,
                        "n_positions": 64},
    "BertForMaskedLM": {"model_type": "bert", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
                        "intermediate_size": 128, "vocab_size": 128, "max_position_embeddings": 64,
                        "architectures": ["BertForMaskedLM"]},
    "LlamaForCausalLM": {"model_type": "llama", "num_hidden_layers": 5, "hidden_size": 64, "num_attention_heads": 4,
                         "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 128,
                         "max_position_embeddings": 64},
}


@pytest.mark.parametrize("name", sorted(TINY))
def test_config_json_shapes_equal_the_real_model_on_the_meta_device(name, tmp_path):
    """Per pipeline rank and tp degree, what config.json predicts equals what transformers builds."""
    import transformers

    from sagelaunch.planner.meta_build import model_from_builder

    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY[name]))
    from_json = model_from_config(path, seq_len=32)
    cls = getattr(transformers, name)
    config = transformers.AutoConfig.for_model(**TINY[name])
    built = model_from_builder(lambda: cls(config), seq_len=32)
    assert from_json.parameters == built.parameters == sum(p.numel() for p in cls(config).parameters())
    for tp, pp, virtual in [(1, 1, 1), (2, 1, 1), (1, 2, 1), (2, 2, 2)]:
        assert ([(s.local, s.reduced_by_ddp) for s in stage_tensors(from_json, tp, pp, virtual)]
                == [(s.local, s.reduced_by_ddp) for s in stage_tensors(built, tp, pp, virtual)])


@pytest.mark.parametrize("billions, count, tp, pp", [(10, 16, 4, 1), (30, 16, 8, 1), (60, 32, 8, 2)])
def test_smp_reference_configurations_fit(billions, count, tp, pp):
    layout = Layout(tp=tp, pp=pp, shard_optimizer_state=True, activation_checkpointing=True, precision="fp16",
                    microbatches=4 if pp > 1 else 1)
    bound = lower_bound(smp_gpt2(billions), layout, hardware(P4D), count)
    assert bound.total < bound.capacity


def test_30b_at_tp8_without_optimizer_sharding_does_not_fit_and_the_fix_is_named():
    layout = Layout(tp=8, activation_checkpointing=True, precision="fp16")
    bound = lower_bound(smp_gpt2(30), layout, hardware(P4D), 16)
    assert bound.total > bound.capacity
    changes = smallest_changes(smp_gpt2(30), layout, hardware(P4D), 16)
    assert changes[0] == "set shard_optimizer_state=True"
    assert any(c.startswith("pipeline_parallel_degree ≥ ") for c in changes)
    full = plan(smp_gpt2(30), layout, P4D, 16, global_batch=16)
    assert full.verdict.status == "does not fit" and full.verdict.largest_term == "optimizer_state"


def _megatron():
    data = json.loads((DATA / "megatron_table1.json").read_text())
    hw = hardware("ml.p4de.24xlarge").model_copy(update={"inter_node_bandwidth": data["inter_node_bandwidth_bytes_per_s"]})
    runs = [PublishedRun(vocab=data["vocab"], seq_len=data["seq_len"],
                         **{k: v for k, v in r.items() if k != "params_b"}) for r in data["rows"]]
    return hw, runs


def test_megatron_table1_fitted_on_one_row_predicts_the_others_within_25_percent():
    hw, runs = _megatron()
    eff = fit_efficiency(runs[6], hw)  # the 145.6B row
    errors = [predicted_tflops(r, hw, eff) / r.tflops_per_gpu - 1 for r in runs]
    assert abs(errors[6]) < 1e-3
    assert all(abs(e) <= 0.25 for e in errors), errors


def test_tensor_parallel_within_a_node_ranks_first_as_megatron_found():
    """arXiv 2104.04473 §5.4.1 (Figure 13): a ~162B GPT on 64 A100s, (t, p) with t·p = 64: the best is t = 8, the
    GPUs of one node. The figure gives no dimensions: h 12288, L 88, a 96 make ~160B."""
    hw, _ = _megatron()
    shape = model_from_dims("gpt2", layers=88, hidden=12288, heads=96, vocab=51200, seq_len=2048)
    times = {}
    for tp in (2, 4, 8, 16, 32):
        if tp > hw.gpus_per_instance:
            continue  # SMP's rule: tp within one instance (jobspec.smp.check_world)
        layout = Layout(tp=tp, pp=64 // tp, microbatches=128, activation_checkpointing=True, precision="fp16",
                        pipeline="simple")
        result = plan(shape, layout, "ml.p4de.24xlarge", 8, global_batch=128, hw=hw)
        times[tp] = result.speed.step_seconds
    assert min(times, key=times.get) == 8


def test_search_ranks_layouts_that_fit_and_explains_the_best():
    result = search(smp_gpt2(10), P4D, 16, global_batch=512, precision="fp16")
    assert result.rows and all(r.status in ("fits", "tight") for r in result.rows)
    steps = [r.speed.step_seconds for r in result.rows]
    assert steps == sorted(steps)
    assert result.why.startswith(result.rows[0].layout.label())


@pytest.mark.parametrize("call, field", [
    (lambda: model_from_config({"model_type": "gpt2", "n_embd": 64, "n_head": 4, "vocab_size": 10,
                                "n_positions": 8}), "config.n_layer"),
    (lambda: model_from_config({"model_type": "gpt3"}), "config.model_type"),
    (lambda: plan(smp_gpt2(10), Layout(tp=3), P4D, 2, global_batch=16), "mp_parameters.pipeline_parallel_degree"),
    (lambda: plan(model_from_dims("gpt2", layers=4, hidden=64, heads=4, vocab=128, seq_len=32), Layout(tp=8), P4D,
                  1, global_batch=8), "tp"),
    (lambda: plan(smp_gpt2(10), Layout(), "ml.p4d.24xlarg", 1, global_batch=8), "instance_type"),
    (lambda: plan(smp_gpt2(10), Layout(), P4D, 1, global_batch=7), "global_batch"),
])
def test_bad_input_is_refused_with_field_value_allowed_and_fix(call, field):
    with pytest.raises(SagelaunchError) as err:
        call()
    assert err.value.field == field and err.value.allowed and err.value.fix


def test_search_of_175b_on_120_instances_completes():
    """The timing is a benchmark (scripts/bench_planner_search.py); this checks it runs and finds layouts."""
    shape = model_from_dims("gpt2", layers=96, hidden=12288, heads=96, vocab=51200, seq_len=2048)
    start = time.perf_counter()
    result = search(shape, P4D, 120, global_batch=1920)
    assert result.rows and result.considered > 500
    assert time.perf_counter() - start < 60


def test_the_planner_imports_without_torch():
    """torch only for the meta-device builder, when it is called."""
    import subprocess
    import sys

    code = ("import sys, sagelaunch.planner, sagelaunch.planner.chart, sagelaunch.planner.validate; "
            "print(sorted(m for m in ('torch', 'transformers', 'plotly') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]"


def test_cost_is_computed_from_the_catalog_price_and_unknown_without_one(monkeypatch):
    from sagelaunch.jobspec import catalog

    layout = Layout(tp=4, shard_optimizer_state=True, activation_checkpointing=True, precision="fp16")
    unpriced = plan(smp_gpt2(10), layout, P4D, 16, global_batch=64, region="eu-west-1")
    assert unpriced.cost is None and unpriced.cost_note.startswith("price unknown")
    page = {"usd_per_hour": 30.0, "source": "a test page", "read_on": "2026-12-07"}
    monkeypatch.setitem(catalog.matrix()["training_prices"], "prices", {"eu-west-1": {P4D: page}})
    priced = plan(smp_gpt2(10), layout, P4D, 16, global_batch=64, region="eu-west-1")
    assert priced.cost is not None and priced.speed is not None
    assert priced.cost.usd_per_hour == pytest.approx(16 * 30.0)
    assert priced.cost.usd_per_1000_steps == pytest.approx(16 * 30.0 * priced.speed.step_seconds * 1000 / 3600)
    seconds_per_billion = 1e9 / priced.speed.tokens_per_second
    assert priced.cost.usd_per_billion_tokens == pytest.approx(16 * 30.0 * seconds_per_billion / 3600)
    assert "a test page" in priced.cost.source and "2026-12-07" in priced.cost.source
