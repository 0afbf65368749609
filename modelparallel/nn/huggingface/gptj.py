"""smp.nn.huggingface.gptj: SMP's GPT-J state-dict translations (the identity here, see translate.py), under the
names of SMP's documentation (translate_hf_gptj_state_dict_to_smdistributed) and of its GPT-J example."""

from __future__ import annotations

from typing import Any

from sagelaunch.modelparallel.nn.huggingface.translate import checked_copy

HF_PREFIXES = ("transformer.", "lm_head.")


def translate_hf_state_dict_to_smdistributed_gptj(state_dict: dict[str, Any], max_seq_len: int | None = None):
    """A Hugging Face GPT-J state dict → the distributed model's."""
    return checked_copy(state_dict, "translate_hf_state_dict_to_smdistributed_gptj", "gptj", HF_PREFIXES)


def translate_hf_gptj_state_dict_to_smdistributed(state_dict: dict[str, Any], max_seq_len: int | None = None):
    return checked_copy(state_dict, "translate_hf_gptj_state_dict_to_smdistributed", "gptj", HF_PREFIXES)


def translate_state_dict_to_hf_gptj(state_dict: dict[str, Any], max_seq_len: int | None = None):
    """The distributed model's full state dict → Hugging Face GPT-J's."""
    return checked_copy(state_dict, "translate_state_dict_to_hf_gptj", "gptj", HF_PREFIXES)
