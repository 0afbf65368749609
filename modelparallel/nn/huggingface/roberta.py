"""smp.nn.huggingface.roberta: SMP's RoBERTa state-dict translations (the identity here, see translate.py), under
each name SMP's documentation and examples use."""

from __future__ import annotations

from typing import Any

from sagelaunch.modelparallel.nn.huggingface.translate import checked_copy


def translate_hf_state_dict_to_smdistributed(state_dict: dict[str, Any]):
    """A Hugging Face RoBERTa state dict → the distributed model's."""
    return checked_copy(state_dict, "translate_hf_state_dict_to_smdistributed", "roberta")


def translate_hf_state_dict_to_smdistributed_roberta(state_dict: dict[str, Any]):
    return checked_copy(state_dict, "translate_hf_state_dict_to_smdistributed_roberta", "roberta")


def translate_state_dict_to_smdistributed(state_dict: dict[str, Any]):
    """The name SMP's developer guide imports for the same translation."""
    return checked_copy(state_dict, "translate_state_dict_to_smdistributed", "roberta")


def translate_state_dict_to_hf_roberta(state_dict: dict[str, Any]):
    """The distributed model's full state dict → Hugging Face RoBERTa's."""
    return checked_copy(state_dict, "translate_state_dict_to_hf_roberta", "roberta")
