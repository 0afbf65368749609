"""The one check behind every smp.nn.huggingface.<family> translation: sagelaunch's tensor parallelism shards the
Hugging Face module tree in place instead of swapping in SMP's distributed transformer, so a wrapped model's (full)
state dict already uses Hugging Face's names and both directions are the identity on such a dict. A dict in SMP's
own DistributedTransformer layout (`seq_layers`, saved by the real library), or one that is not the family's, is
refused by name rather than passed through unchanged."""

from __future__ import annotations

from typing import Any

from sagelaunch.modelparallel.errors import SMPValidationError


def checked_copy(state_dict: dict[str, Any], function: str, family: str,
                 prefixes: tuple[str, ...] | None = None) -> dict[str, Any]:
    """`state_dict` copied, after refusing SMP-layout keys and (with `prefixes`) keys outside the family's names."""
    smp_layout = [k for k in state_dict if "seq_layers." in k]
    foreign = [k for k in state_dict if prefixes and not k.startswith(prefixes)]
    if smp_layout or foreign:
        example = (smp_layout or foreign)[0]
        expected = f" (expected keys starting with {' or '.join(prefixes)})" if prefixes else ""
        raise SMPValidationError(
            f"smp.nn.huggingface.{family}.{function}: key {example!r} is not a Hugging Face {family} name{expected}; "
            "sagelaunch's distributed models keep Hugging Face's module names, and checkpoints in the real "
            "library's DistributedTransformer layout (seq_layers) cannot be translated here; fix: save the state "
            "dict from the Hugging Face model", field="state_dict", value=example,
            allowed=f"a Hugging Face {family} state dict", fix="save the state dict from the Hugging Face model")
    return dict(state_dict)
