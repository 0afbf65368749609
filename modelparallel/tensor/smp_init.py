"""SMP's own weight initialisation of the layers it builds: normal(0, initializer_range) weights (linear and
embedding), zero biases, layer norms at one and zero (its DistributedTransformer* layers with
use_normal_initialization=True, and the distributed transformer SMP builds in place of a Hugging Face GPT-2 created
for tensor parallelism, from the model config's initializer_range). Scripts written for it skip Hugging Face's own
initialisation (the GPT-2 example replaces PreTrainedModel.init_weights with a no-op), so without this the model would
train from the layers' construction defaults (an N(0, 1) embedding) instead."""

from __future__ import annotations

from sagelaunch.modelparallel.core import state

# Hugging Face classes SMP v1 replaces with its distributed transformer when created for tensor parallelism
DISTRIBUTED_TRANSFORMER_FAMILIES = ("GPT2Model",)


def normal_initialization(module, initializer_range: float) -> None:
    """Initialise every layer under `module` as SMP does (see the module doc); meta tensors are left alone."""
    import torch
    import torch.nn as nn

    with torch.no_grad():
        for m in module.modules():
            weight = getattr(m, "weight", None)
            bias = getattr(m, "bias", None)
            if isinstance(weight, nn.Parameter) and weight.is_meta:
                continue
            if isinstance(m, (nn.LayerNorm, nn.GroupNorm)) or type(m).__name__.endswith("LayerNorm"):
                if weight is not None:
                    nn.init.ones_(weight)
                if isinstance(bias, nn.Parameter):
                    nn.init.zeros_(bias)
            elif isinstance(weight, nn.Parameter) and weight.dim() >= 2:  # Linear, Conv1D, Embedding
                nn.init.normal_(weight, std=initializer_range)
                if isinstance(bias, nn.Parameter):
                    nn.init.zeros_(bias)


def _hf_initialized(module) -> bool:
    """Whether Hugging Face's own initialisation already ran on `module` (it flags what it initialised)."""
    return any(getattr(m, "_is_hf_initialized", False) for m in module.modules())


def initialize_distributed_transformer(parent, name: str, module) -> None:
    """Called as each module created for tensor parallelism is registered in `parent` as `name`: a Hugging Face
    transformer SMP would build its distributed transformer for gets SMP's initialisation, and the language-model head
    registered beside it is tied to its word embeddings as SMP's DistributedTransformerLMHead's is (Hugging Face ties
    it in init_weights, which scripts written for SMP skip). mp_parameters' _match_weights keeps the weights the
    modules were built with."""
    if state.initialized and state.cfg.match_weights:
        return
    config = getattr(module, "config", None)
    if type(module).__name__ in DISTRIBUTED_TRANSFORMER_FAMILIES:
        import torch

        if _hf_initialized(module):
            return  # Hugging Face already initialised it (the script did not skip init_weights): keep that

        # on a forked random stream: when the script lets Hugging Face initialise the model afterwards, that
        # initialisation draws the same numbers as without this one (a tp=2 run starts from degree 1's weights)
        cuda = sorted({p.device.index or 0 for p in module.parameters() if p.device.type == "cuda"})
        with torch.random.fork_rng(devices=cuda):
            normal_initialization(module, getattr(config, "initializer_range", 0.02))
        return
    base = getattr(parent, getattr(parent, "base_model_prefix", ""), None)
    parent_config = getattr(parent, "config", None)
    if (name == "lm_head" and base is not None and type(base).__name__ in DISTRIBUTED_TRANSFORMER_FAMILIES
            and getattr(parent_config, "tie_word_embeddings", False) and not _hf_initialized(base)):
        module.weight = base.get_input_embeddings().weight
