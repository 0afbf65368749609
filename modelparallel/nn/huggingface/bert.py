"""smp.nn.huggingface.bert: SMP's BERT state-dict translations (the identity here, see translate.py)."""

from __future__ import annotations

from typing import Any

from sagelaunch.modelparallel.nn.huggingface.translate import checked_copy


def translate_hf_state_dict_to_smdistributed(state_dict: dict[str, Any]):
    """A Hugging Face BERT state dict → the distributed model's."""
    return checked_copy(state_dict, "translate_hf_state_dict_to_smdistributed", "bert")


def translate_state_dict_to_hf_bert(state_dict: dict[str, Any]):
    """The distributed model's full state dict → Hugging Face BERT's."""
    return checked_copy(state_dict, "translate_state_dict_to_hf_bert", "bert")
