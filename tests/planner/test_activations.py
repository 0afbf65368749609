"""The activation model against transformers' own eager layers: the bytes autograd saves for backward (storage by
storage, parameters left out) in one GPT-2, BERT and Llama layer, fp32 and bf16, on the CPU — the difference between
a model with two layers and with one, so every input a layer receives is real."""

from __future__ import annotations

import pytest

from sagelaunch.planner.memory import layer_activation_bytes
from sagelaunch.planner.models import model_from_config

SEQ, BATCH = 64, 4
CONFIGS = {
    "GPT2LMHeadModel": {"model_type": "gpt2", "n_embd": 128, "n_head": 4, "vocab_size": 512, "n_positions": SEQ},
    "BertForMaskedLM": {"model_type": "bert", "hidden_size": 128, "num_attention_heads": 4, "intermediate_size": 512,
                        "vocab_size": 512, "max_position_embeddings": SEQ, "type_vocab_size": 1},
    "LlamaForCausalLM": {"model_type": "llama", "hidden_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2,
                         "intermediate_size": 344, "vocab_size": 512, "max_position_embeddings": SEQ},
}
LAYERS_KEY = {"gpt2": "n_layer", "bert": "num_hidden_layers", "llama": "num_hidden_layers"}


def saved_bytes(name: str, layers: int, dtype) -> int:
    import torch
    import transformers

    data = {**CONFIGS[name], LAYERS_KEY[CONFIGS[name]["model_type"]]: layers}
    config = transformers.AutoConfig.for_model(**data)
    config._attn_implementation = "eager"
    config.use_cache = False
    torch.manual_seed(0)
    model = getattr(transformers, name)(config).train().to(dtype)
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    saved: dict[int, int] = {}

    def pack(t):
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            saved[storage.data_ptr()] = storage.nbytes()
        return t

    ids = torch.randint(0, 512, (BATCH, SEQ))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        model(input_ids=ids, labels=ids)
    return sum(saved.values())


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_one_layer_saves_what_the_model_predicts(name, precision):
    import torch

    dtype = torch.float32 if precision == "fp32" else torch.bfloat16
    measured = saved_bytes(name, 2, dtype) - saved_bytes(name, 1, dtype)
    shape = model_from_config({**CONFIGS[name], LAYERS_KEY[CONFIGS[name]["model_type"]]: 2}, seq_len=SEQ)
    predicted = layer_activation_bytes(shape, 1, BATCH * SEQ, SEQ, 4 if precision == "fp32" else 2, device="cpu")
    assert predicted == pytest.approx(measured, rel=0.02), (predicted, measured)
