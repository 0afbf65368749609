"""smp.nn.huggingface.gptneo: SMP's GPT-Neo state-dict translations (the identity here, see translate.py)."""

from __future__ import annotations

from typing import Any

from sagelaunch.modelparallel.nn.huggingface.translate import checked_copy

HF_PREFIXES = ("transformer.", "lm_head.")


def translate_hf_state_dict_to_smdistributed_gptneo(state_dict: dict[str, Any], max_seq_len: int | None = None):
    """A Hugging Face GPT-Neo state dict → the distributed model's."""
    return checked_copy(state_dict, "translate_hf_state_dict_to_smdistributed_gptneo", "gptneo", HF_PREFIXES)


def translate_state_dict_to_hf_gptneo(state_dict: dict[str, Any], max_seq_len: int | None = None):
    """The distributed model's full state dict → Hugging Face GPT-Neo's."""
    return checked_copy(state_dict, "translate_state_dict_to_hf_gptneo", "gptneo", HF_PREFIXES)
