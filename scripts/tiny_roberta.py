"""Offline RoBERTa pieces: a tiny RobertaConfig model and a byte-level BPE tokenizer trained on our text.

Nothing here downloads anything, so tests, CI and the README's main job fine-tune a real
`RobertaForSequenceClassification` end to end in seconds on a CPU. The tokenizer is a
transformers `RobertaTokenizer` (the fast, `tokenizers`-backed class in transformers v5), so the
saved folder loads with `AutoTokenizer` and `pipeline("sentiment-analysis")` like a hub checkpoint.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable

LABELS = ("negative", "neutral", "positive")  # tweet_eval/sentiment order
SPECIAL_TOKENS = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]  # RoBERTa ids 0..4
TINY_MAX_LENGTH = 64


def train_tokenizer(texts: Iterable[str], vocab_size: int = 1000, max_length: int = TINY_MAX_LENGTH):
    """Byte-level BPE (RoBERTa's scheme) trained on `texts`, wrapped as a transformers tokenizer."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(list(texts), vocab_size=vocab_size, min_frequency=2, special_tokens=SPECIAL_TOKENS,
                            show_progress=False)
    with tempfile.TemporaryDirectory() as tmp:
        vocab, merges = bpe.save_model(tmp)
        # save_pretrained writes tokenizer.json, which transformers 4.x (the inference images) loads too
        return RobertaTokenizer(vocab=vocab, merges=merges, model_max_length=max_length)


def tiny_config(vocab_size: int, max_length: int = TINY_MAX_LENGTH, **overrides):
    """A RoBERTa small enough to train in seconds on a CPU, with our label names."""
    from transformers import RobertaConfig

    settings = dict(
        vocab_size=vocab_size, hidden_size=64, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
        max_position_embeddings=max_length + 2,  # RoBERTa offsets positions by padding_idx + 1
        type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
        num_labels=len(LABELS), id2label=dict(enumerate(LABELS)), label2id={l: i for i, l in enumerate(LABELS)},
    )
    settings.update(overrides)
    return RobertaConfig(**settings)


def build_tiny_model(tokenizer, seed: int = 42, **overrides):
    """Randomly initialised RobertaForSequenceClassification sized for `tokenizer`."""
    import torch
    from transformers import RobertaForSequenceClassification

    torch.manual_seed(seed)
    return RobertaForSequenceClassification(tiny_config(len(tokenizer), tokenizer.model_max_length, **overrides))
