"""In-process checks of the parts that need no second rank: parameters, microbatches, StepOutput, plans."""

from __future__ import annotations

import json

import pytest
import torch

from sagelaunch.modelparallel.core.config import load_parameters
from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.pipeline.microbatch import split_arguments
from sagelaunch.modelparallel.pipeline.step_output import StepOutput, merge_microbatch_results


def test_env_parameters_merge_with_config_and_aliases(monkeypatch):
    monkeypatch.setenv("SM_HP_MP_PARAMETERS", json.dumps({"partitions": 2, "microbatches": 4, "ddp": True}))
    cfg = load_parameters({"microbatches": 2, "placement_strategy": "spread"})
    assert (cfg.pipeline_parallel_degree, cfg.microbatches, cfg.placement_strategy) == (2, 2, "spread")
    cfg = load_parameters({"pipeline_parallel_degree": 1})  # the canonical key replaces the env alias
    assert cfg.pipeline_parallel_degree == 1


def test_unknown_and_bad_parameters_are_rejected(monkeypatch):
    monkeypatch.delenv("SM_HP_MP_PARAMETERS", raising=False)
    with pytest.raises(SMPValidationError, match="microbatchs"):
        load_parameters({"microbatchs": 2})
    with pytest.raises(SMPValidationError, match="placement_strategy"):
        load_parameters({"placement_strategy": "DPX"})
    monkeypatch.setenv("SM_HP_MP_PARAMETERS", "{not json")
    with pytest.raises(SMPValidationError, match="SM_HP_MP_PARAMETERS is not valid JSON"):
        load_parameters()


def test_microbatch_split_rules():
    def fn(model, x, extra, y=None):
        return x

    x, y = torch.arange(12).reshape(6, 2), torch.arange(6)
    mbs = split_arguments(fn, ("m", x, {"a": torch.ones(2, 6)}), {"y": y}, 3,
                          non_split_inputs=None, input_split_axes={"extra": 1})
    assert len(mbs) == 3 and mbs[1][0][0] == "m"
    assert torch.equal(mbs[1][0][1], x[2:4]) and mbs[2][0][2]["a"].shape == (2, 2)
    assert torch.equal(mbs[0][0][3], y[:2])  # bound back as the 4th positional argument
    kept = split_arguments(fn, ("m", x, torch.ones(5)), {}, 3, non_split_inputs=["extra"])
    assert kept[0][0][2].shape == (5,)
    with pytest.raises(SMPValidationError, match="'x' has batch size 6 along axis 0.*microbatches=4"):
        split_arguments(fn, ("m", x, None), {}, 4)


def test_step_output_reductions_and_structure():
    out = StepOutput([torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])])
    assert torch.equal(out.reduce_mean(), torch.tensor([2.0, 3.0]))
    assert torch.equal(out.reduce_sum(), torch.tensor([4.0, 6.0]))
    assert out.concat().shape == (4,) and out.stack().shape == (2, 2)
    merged = merge_microbatch_results([(torch.tensor(1.0), {"acc": torch.tensor(0.5)}, "tag"),
                                       (torch.tensor(3.0), {"acc": torch.tensor(1.0)}, "tag")], detach=True)
    assert merged[0].reduce_mean().item() == 2.0 and merged[1]["acc"].outputs[1].item() == 1.0
    assert merged[2] == ["tag", "tag"]
    # Python numbers: one value per microbatch (SMP's shape), not the last microbatch's alone
    assert merge_microbatch_results([{"n": 1.5}, {"n": 2.5}], detach=True) == {"n": [1.5, 2.5]}
    assert merge_microbatch_results([None, None], detach=True) is None


def test_tensor_parallel_plans_and_divisibility():
    from sagelaunch.modelparallel.tensor.tensor_parallel import build_plan, set_tensor_parallelism
    from tests.modelparallel.models import build_mlp, build_roberta

    mlp = build_mlp()
    set_tensor_parallelism(mlp)
    plan = build_plan(mlp, 2).styles
    assert [type(plan[k]).__name__ for k in ("0", "2", "4", "6")] == ["ColwiseParallel", "RowwiseParallel"] * 2
    roberta = build_roberta()
    set_tensor_parallelism(roberta)
    plan = build_plan(roberta, 2).styles
    layer0 = {k.split("layer.0.")[1]: type(v).__name__ for k, v in plan.items() if ".layer.0." in k}
    assert layer0 == {"attention.self.query": "ColwiseParallel", "attention.self.key": "ColwiseParallel",
                      "attention.self.value": "ColwiseParallel", "attention.output.dense": "RowwiseParallel",
                      "intermediate.dense": "ColwiseParallel", "output.dense": "RowwiseParallel"}
    with pytest.raises(SMPValidationError, match="tensor_parallel_degree=3 does not divide num_attention_heads=4"):
        build_plan(roberta, 3)


def test_pipeline_partition_even_and_manual():
    import torch.nn as nn

    from sagelaunch.modelparallel.pipeline.partitioning import manual_chunks, split_evenly

    assert split_evenly(7, 4) == [range(0, 2), range(2, 4), range(4, 6), range(6, 7)]
    units = [(str(i), nn.Linear(2, 2)) for i in range(4)]
    for (_, m), p in zip(units, [0, 0, 1, 1]):
        m._smp_partition = p
    assert manual_chunks(units, 2, 0) == [range(0, 2), range(2, 4)]
    units[3][1]._smp_partition = 0
    with pytest.raises(SMPValidationError, match="partitions must follow the order"):
        manual_chunks(units, 2, 0)


def test_error_names_mp_parameters_once(monkeypatch):
    monkeypatch.delenv("SM_HP_MP_PARAMETERS", raising=False)
    with pytest.raises(SMPValidationError) as err:
        load_parameters({"microbatchs": 2})
    assert str(err.value).startswith("mp_parameters: unknown SMP v1 parameter 'microbatchs'")
    assert "mp_parameters: mp_parameters" not in str(err.value)
    with pytest.raises(SMPValidationError, match=r"^mp_parameters\.microbatches: Input should be greater"):
        load_parameters({"microbatches": 0})


@pytest.mark.parametrize("config,field", [
    ({"pipeline": "_only_forward"}, "pipeline='_only_forward'"),
    ({"delayed_parameter_initialization": True, "pipeline_parallel_degree": 2},
     "delayed_parameter_initialization=True with pipeline_parallel_degree=2, sharded_data_parallel_degree=1"),
])
def test_parameters_that_cannot_be_honoured_are_refused(monkeypatch, config, field):
    from sagelaunch.modelparallel.core.config import check_supported

    monkeypatch.delenv("SM_HP_MP_PARAMETERS", raising=False)
    cfg = load_parameters(config)
    with pytest.raises(SMPValidationError, match=rf"mp_parameters\.{field} is not supported .*supported: .*fix: "):
        check_supported(cfg)
    assert check_supported(load_parameters({"sdp_reduce_bucket_size": 5})) == [
        "sdp_reduce_bucket_size=5 (tunes SMP's MiCS kernels; FSDP2 reduce-scatters per sharded block)"]


def test_set_partition_places_a_layer_and_checks_the_index(monkeypatch):
    import torch.nn as nn

    from sagelaunch.modelparallel.core import state
    from sagelaunch.modelparallel.pipeline.partitioning import manual_chunks, set_partition

    units = [(str(i), nn.Sequential(nn.Linear(2, 2), nn.ReLU())) for i in range(4)]
    for (_, m), p in zip(units, [0, 1, 1, 1]):
        set_partition(m, p)
    assert manual_chunks(units, 2, 0) == [range(0, 1), range(1, 4)]
    assert units[1][1][0]._smp_partition == 1  # its submodules follow it
    monkeypatch.setattr(state, "initialized", True)
    monkeypatch.setattr(state, "cfg", load_parameters({"pipeline_parallel_degree": 2}))
    with pytest.raises(SMPValidationError, match=r"smp.set_partition\(\.\.\., 2\): index must be in 0..1"):
        set_partition(units[0][1], 2)


def test_sharded_data_parallel_and_delayed_init_with_tp_are_accepted(monkeypatch):
    from sagelaunch.modelparallel.core.config import check_supported

    monkeypatch.delenv("SM_HP_MP_PARAMETERS", raising=False)
    assert check_supported(load_parameters({"sharded_data_parallel_degree": 2, "ddp": True})) == []
    assert check_supported(load_parameters({"delayed_parameter_initialization": True, "tensor_parallel_degree": 2,
                                            "ddp": True})) == []
