"""smp.nn.huggingface.gpt2: SMP's GPT-2 state-dict translations (Hugging Face names ↔ the distributed model's; the
identity here, see translate.py)."""

from __future__ import annotations

from typing import Any

from sagelaunch.modelparallel.nn.huggingface.translate import checked_copy

HF_PREFIXES = ("transformer.", "lm_head.")


def translate_hf_state_dict_to_smdistributed_gpt2(state_dict: dict[str, Any], max_seq_len: int | None = None):
    """A Hugging Face GPT-2 state dict → the distributed model's."""
    return checked_copy(state_dict, "translate_hf_state_dict_to_smdistributed_gpt2", "gpt2", HF_PREFIXES)


def translate_hf_state_dict_to_smdistributed(state_dict: dict[str, Any], max_seq_len: int | None = None):
    """The same translation under its name in older SMP releases (the May 2022 GPT-2 example imports it)."""
    return checked_copy(state_dict, "translate_hf_state_dict_to_smdistributed", "gpt2", HF_PREFIXES)


def translate_state_dict_to_hf_gpt2(state_dict: dict[str, Any], max_seq_len: int | None = None):
    """The distributed model's full state dict → Hugging Face GPT-2's."""
    return checked_copy(state_dict, "translate_state_dict_to_hf_gpt2", "gpt2", HF_PREFIXES)
