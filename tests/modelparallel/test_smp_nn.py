"""smp.nn.DistributedTransformer* as SMP v1 documents them (one process; distribution: test_parallel_models)."""

from __future__ import annotations

import pytest
import torch

from tests.modelparallel.models import SEQ, VOCAB, build_smp_lm


def test_lm_head_is_causal_and_tied_to_the_word_embeddings():
    model = build_smp_lm()
    assert model.lm_head.weight is model.word_embedding.weight
    ids = torch.randint(0, VOCAB, (2, SEQ))
    changed = ids.clone()
    changed[:, -1] = (changed[:, -1] + 1) % VOCAB
    logits, logits_changed = model((ids, None, None, None, None)), model((changed, None, None, None, None))
    assert logits.shape == (2, SEQ, VOCAB)
    assert torch.equal(logits[:, :-1], logits_changed[:, :-1])  # a later token never changes earlier logits
    assert not torch.equal(logits[:, -1], logits_changed[:, -1])


def test_attention_mask_one_marks_positions_to_ignore():
    model = build_smp_lm()
    ids = torch.randint(0, VOCAB, (1, SEQ))
    mask = torch.zeros(1, SEQ, dtype=torch.long)
    mask[0, 0] = 1  # hide the first token from every query
    changed = ids.clone()
    changed[0, 0] = (changed[0, 0] + 1) % VOCAB
    out = model((ids, mask, None, None, None))[0, 1:]
    out_changed = model((changed, mask, None, None, None))[0, 1:]
    assert torch.allclose(out, out_changed, atol=1e-6)


def test_layer_forward_takes_and_returns_smp_tuples():
    from sagelaunch.modelparallel.nn import DistributedTransformerLayer

    layer = DistributedTransformerLayer(num_attention_heads=2, attention_head_size=4, hidden_size=8,
                                        intermediate_size=16, attention_dropout_prob=0.0, hidden_dropout_prob=0.0)
    hidden, mask = torch.randn(2, 3, 8), torch.zeros(2, 1, 1, 3)
    out, mask_out = layer((hidden, mask))
    assert out.shape == hidden.shape and mask_out is mask
    with pytest.raises(ValueError, match="activation='swish' is not supported; allowed: 'gelu', 'relu'"):
        DistributedTransformerLayer(activation="swish")
    with pytest.raises(ValueError, match="at least one of pre_layernorm and post_layernorm"):
        DistributedTransformerLayer(pre_layernorm=False, post_layernorm=False)
