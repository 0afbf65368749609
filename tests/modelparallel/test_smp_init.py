"""SMP's own weight initialisation of a Hugging Face GPT-2 created for its distributed transformer (the GPT-2
example's use_distributed_transformer=1 path, which skips Hugging Face's init_weights): step 0's loss is the
Hugging Face-initialised model's, within the spread of seeds."""

from __future__ import annotations

import statistics

import pytest
import torch

from sagelaunch import modelparallel as smp
from sagelaunch.jobspec.smp import SMPParameters
from sagelaunch.modelparallel.core import state

VOCAB, SEQ, SEEDS = 1024, 16, range(5)


def _gpt2(seed: int, smp_path: bool):
    import transformers
    from transformers.modeling_utils import PreTrainedModel

    torch.manual_seed(seed)
    cfg = transformers.GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=32, n_layer=2, n_head=4, bos_token_id=0,
                                  eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    if not smp_path:
        return transformers.GPT2LMHeadModel(cfg)
    skipped = PreTrainedModel.init_weights
    PreTrainedModel.init_weights = lambda self: None  # what the example does when use_distributed_transformer=1
    try:
        with smp.tensor_parallelism():
            return transformers.GPT2LMHeadModel(cfg)
    finally:
        PreTrainedModel.init_weights = skipped


def _step0_loss(model, seed: int) -> float:
    ids = torch.randint(0, VOCAB, (8, SEQ), generator=torch.Generator().manual_seed(100 + seed))
    with torch.no_grad():
        return model(input_ids=ids, labels=ids).loss.item()


def test_the_distributed_transformer_path_starts_where_hugging_faces_init_does():
    hf = [_step0_loss(_gpt2(s, smp_path=False), s) for s in SEEDS]
    ours = [_step0_loss(_gpt2(s, smp_path=True), s) for s in SEEDS]
    spread = max(hf) - min(hf)
    assert abs(statistics.mean(ours) - statistics.mean(hf)) <= spread, (ours, hf)
    assert max(ours) - min(ours) <= 2 * spread  # the same distribution, not one lucky seed


def test_the_lm_head_is_tied_and_weights_follow_the_initializer_range():
    model = _gpt2(0, smp_path=True)
    assert model.lm_head.weight is model.transformer.wte.weight  # as SMP's DistributedTransformerLMHead
    assert model.transformer.wte.weight.std().item() == pytest.approx(0.02, rel=0.1)
    assert model.transformer.h[0].attn.c_attn.weight.std().item() == pytest.approx(0.02, rel=0.1)
    assert torch.count_nonzero(model.transformer.h[0].mlp.c_fc.bias) == 0


def test_match_weights_keeps_the_weights_the_layers_were_built_with(monkeypatch):
    monkeypatch.setattr(state, "initialized", True)
    monkeypatch.setattr(state, "cfg", SMPParameters.model_validate({"_match_weights": True}))
    model = _gpt2(0, smp_path=True)
    assert model.transformer.wte.weight.std().item() == pytest.approx(1.0, rel=0.1)  # nn.Embedding's own N(0, 1)
