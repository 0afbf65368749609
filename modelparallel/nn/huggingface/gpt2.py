"""smp.nn.huggingface.gpt2: SMP's GPT-2 state-dict translations (Hugging Face names ↔ the distributed model's).

sagelaunch's tensor parallelism shards the Hugging Face module tree in place instead of swapping in SMP's
DistributedTransformerLMHead, so a wrapped GPT-2's (full) state dict already uses Hugging Face's names: both
translations are the identity on such a dict. A dict in SMP's DistributedTransformer layout (`seq_layers`, saved by
the real library) is refused by name rather than passed through unchanged."""

from __future__ import annotations

from typing import Any

from sagelaunch.modelparallel.errors import SMPValidationError

HF_PREFIXES = ("transformer.", "lm_head.")


def _checked_copy(state_dict: dict[str, Any], function: str) -> dict[str, Any]:
    foreign = [k for k in state_dict if not k.startswith(HF_PREFIXES)]
    smp_layout = [k for k in state_dict if ".seq_layers." in k]
    if smp_layout or foreign:
        example = (smp_layout or foreign)[0]
        raise SMPValidationError(
            f"smp.nn.huggingface.gpt2.{function}: key {example!r} is not a Hugging Face GPT-2 name "
            f"(expected keys starting with {' or '.join(HF_PREFIXES)}); sagelaunch's distributed GPT-2 keeps "
            "Hugging Face's module names, and checkpoints in the real library's DistributedTransformer layout "
            "(seq_layers) cannot be translated here; fix: save the state dict from the Hugging Face model")
    return dict(state_dict)


def translate_hf_state_dict_to_smdistributed_gpt2(state_dict: dict[str, Any], max_seq_len: int | None = None):
    """A Hugging Face GPT-2 state dict → the distributed model's (the same names here; see the module doc)."""
    return _checked_copy(state_dict, "translate_hf_state_dict_to_smdistributed_gpt2")


def translate_hf_state_dict_to_smdistributed(state_dict: dict[str, Any], max_seq_len: int | None = None):
    """The same translation under its name in older SMP releases (the May 2022 GPT-2 example imports it)."""
    return _checked_copy(state_dict, "translate_hf_state_dict_to_smdistributed")


def translate_state_dict_to_hf_gpt2(state_dict: dict[str, Any], max_seq_len: int | None = None):
    """The distributed model's full state dict → Hugging Face GPT-2's (the same names here)."""
    return _checked_copy(state_dict, "translate_state_dict_to_hf_gpt2")
