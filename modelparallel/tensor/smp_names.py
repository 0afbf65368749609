"""SMP v1's distributed-transformer names on the Hugging Face modules tensor parallelism distributes.

SMP v1 replaces a Hugging Face GPT-2 created for tensor parallelism (inside `smp.model_creation(tensor_parallelism=True)`
or `smp.tensor_parallelism()`) with its own DistributedTransformerLMHead, and scripts written for it walk that tree:
`model.transformer.seq_layers`, each layer's `.attention` and `.output` (the GPT-2 example's
use_distributed_transformer=1 path, its default). Here the Hugging Face modules stay, sharded in place under their own
state-dict names; SMP's names are views onto them, kept out of the module tree so that parameters, state dicts and
hooks are unchanged (no module is registered twice).
"""

from __future__ import annotations

from sagelaunch.modelparallel.tensor.tp_marks import MARK

# Hugging Face class name → {SMP's name: the Hugging Face attribute it views}
SMP_NAMES: dict[str, dict[str, str]] = {
    "GPT2Model": {"seq_layers": "h"},
    "GPT2Block": {"attention": "attn", "output": "mlp"},
}


def expose_smp_names(module) -> None:
    """Give each module marked for tensor parallelism SMP's names for its parts; a name the module already has is
    never hidden."""
    for sub in module.modules():
        names = SMP_NAMES.get(type(sub).__name__)
        if not names or not getattr(sub, MARK, False):
            continue
        for smp_name, hf_name in names.items():
            if not hasattr(sub, smp_name) and hasattr(sub, hf_name):
                object.__setattr__(sub, smp_name, getattr(sub, hf_name))  # a plain attribute: not a child module
