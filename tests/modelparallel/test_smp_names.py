"""SMP's distributed-transformer names (transformer.seq_layers, a layer's .attention/.output) on a Hugging Face GPT-2
created for tensor parallelism: views onto the same modules, invisible to parameters and state dicts."""

from __future__ import annotations

from sagelaunch import modelparallel as smp
from sagelaunch.modelparallel.tensor.smp_names import expose_smp_names
from tests.modelparallel.models import build_gpt2


def test_a_gpt2_created_for_tensor_parallelism_gets_smps_names_as_views():
    with smp.tensor_parallelism():
        model = build_gpt2(0)
    names_before = [n for n, _ in model.named_parameters()]
    state_before = list(model.state_dict())
    expose_smp_names(model)
    assert model.transformer.seq_layers is model.transformer.h
    for layer in model.transformer.seq_layers.children():
        assert layer.attention is layer.attn and layer.output is layer.mlp
    assert [n for n, _ in model.named_parameters()] == names_before  # nothing registered twice
    assert list(model.state_dict()) == state_before
    assert "seq_layers" not in dict(model.transformer.named_children())


def test_a_model_not_created_for_tensor_parallelism_keeps_only_its_own_names():
    model = build_gpt2(0)
    expose_smp_names(model)
    assert not hasattr(model.transformer, "seq_layers")
    assert not hasattr(model.transformer.h[0], "attention")


def test_a_name_the_module_already_has_is_never_hidden():
    with smp.tensor_parallelism():
        model = build_gpt2(0)
    block = model.transformer.h[0]
    block.output = "the user's own"  # a plain attribute of the user's
    expose_smp_names(model)
    assert block.output == "the user's own" and block.attention is block.attn
