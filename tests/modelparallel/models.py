"""Tiny models, data and the single-process reference shared by the torchrun worker and the tests."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

IN, HIDDEN, CLASSES = 8, 16, 4
SEQ, VOCAB = 8, 64


def build_mlp(seed: int = 0) -> nn.Sequential:
    torch.manual_seed(seed)
    return nn.Sequential(
        nn.Linear(IN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
        nn.Linear(HIDDEN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, CLASSES),
    )


def build_roberta(seed: int = 0):
    from transformers import RobertaConfig, RobertaForSequenceClassification

    torch.manual_seed(seed)
    cfg = RobertaConfig(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=4, num_attention_heads=4,
                        intermediate_size=32, max_position_embeddings=SEQ + 4, type_vocab_size=1, num_labels=3,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, pad_token_id=1)
    cfg._attn_implementation = "eager"
    return RobertaForSequenceClassification(cfg)


def build_bert_mlm(seed: int = 0):
    """BertForMaskedLM: its MLM head's decoder weight is tied to the word embeddings and its decoder bias to
    cls.predictions.bias (transformers' _tied_weights_keys)."""
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    cfg = BertConfig(vocab_size=VOCAB, hidden_size=16, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=32, max_position_embeddings=SEQ, type_vocab_size=2,
                     hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    cfg._attn_implementation = "eager"
    model = BertForMaskedLM(cfg)
    with torch.no_grad():  # zeros at init: a nonzero bias shows it is used (and sharded) as the one tied parameter
        model.cls.predictions.bias.normal_(0.0, 0.5)
    return model


def _causal_lm(config_class: str, model_class: str, seed: int, **config):
    import transformers

    torch.manual_seed(seed)
    cfg = getattr(transformers, config_class)(vocab_size=VOCAB, **config)
    cfg._attn_implementation = "eager"
    return getattr(transformers, model_class)(cfg)


def build_gpt2(seed: int = 0):
    return _causal_lm("GPT2Config", "GPT2LMHeadModel", seed, n_positions=SEQ, n_embd=16, n_layer=2, n_head=4,
                      bos_token_id=0, eos_token_id=0,
                      resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)


def build_llama(seed: int = 0):
    return _causal_lm("LlamaConfig", "LlamaForCausalLM", seed, hidden_size=16, intermediate_size=32,
                      num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ)


def build_neox(seed: int = 0):
    return _causal_lm("GPTNeoXConfig", "GPTNeoXForCausalLM", seed, hidden_size=16, intermediate_size=32,
                      num_hidden_layers=2, num_attention_heads=4, max_position_embeddings=SEQ, rotary_pct=0.5)


def build_gptj(seed: int = 0):
    return _causal_lm("GPTJConfig", "GPTJForCausalLM", seed, n_embd=16, n_layer=2, n_head=4, rotary_dim=2,
                      bos_token_id=0, eos_token_id=0,
                      n_positions=SEQ, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)


def build_smp_lm(seed: int = 0):
    """SMP's own smp.nn.DistributedTransformerLMHead (GPT-2-like: causal, tied LM head)."""
    from sagelaunch.modelparallel.nn.transformer import DistributedTransformerLMHead

    torch.manual_seed(seed)
    return DistributedTransformerLMHead(
        num_layers=2, num_attention_heads=4, attention_head_size=4, hidden_size=16, intermediate_size=32,
        vocab_size=VOCAB, num_positions=SEQ, attention_dropout_prob=0.0, hidden_dropout_prob=0.0,
        causal_mask_size=SEQ, use_normal_initialization=True, pre_layernorm=True, post_layernorm=False)


BUILDERS = {"mlp": build_mlp, "roberta": build_roberta, "gpt2": build_gpt2, "llama": build_llama,
            "neox": build_neox, "gptj": build_gptj, "smp_lm": build_smp_lm, "bert_mlm": build_bert_mlm}
CAUSAL_LMS = ("gpt2", "llama", "neox", "gptj", "smp_lm")


def global_batch(model: str, step: int, n: int) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(1000 + step)
    if model == "mlp":
        return {"x": torch.randn(n, IN, generator=g), "y": torch.randint(0, CLASSES, (n,), generator=g)}
    if model in CAUSAL_LMS:
        return {"x": torch.randint(0, VOCAB, (n, SEQ), generator=g)}
    ids = torch.randint(3, VOCAB, (n, SEQ), generator=g)
    mask = torch.ones(n, SEQ, dtype=torch.long)
    mask[::2, -2:] = 0  # some padding so the attention mask matters
    return {"x": ids, "mask": mask, "y": torch.randint(0, 3, (n,), generator=g)}


def shard(batch: dict[str, torch.Tensor], index: int, count: int) -> dict[str, torch.Tensor]:
    return {k: v.chunk(count, dim=0)[index] for k, v in batch.items()}


def make_optimizer(name: str, params):
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-2)
    if name == "adam_eps":  # attention's key bias has a zero gradient (rounding noise): plain Adam's update of
        return torch.optim.Adam(params, lr=1e-2, eps=1e-4)  # it is ±lr, whatever the noise; eps damps that
    return torch.optim.SGD(params, lr=0.1)


def lm_loss(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Next-token cross entropy (every sequence has the same length: microbatch means average exactly)."""
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))


def forward_loss(model_name: str, model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    if model_name == "mlp":
        return F.cross_entropy(model(batch["x"]), batch["y"])
    if model_name == "smp_lm":  # SMP's tuple input: (input_ids, attention_mask, token_type_ids, position_ids, labels)
        return lm_loss(model((batch["x"], None, None, None, None)), batch["x"])
    if model_name in CAUSAL_LMS:
        return lm_loss(model(batch["x"]).logits, batch["x"])
    if model_name == "bert_mlm":  # every position a label: microbatch means average exactly
        return model(batch["x"], attention_mask=batch["mask"], labels=batch["x"]).loss
    return F.cross_entropy(model(batch["x"], attention_mask=batch["mask"]).logits, batch["y"])


def build_delayed(model_name: str, seed: int = 0):
    """The model built on the meta device and materialised as smp.DistributedModel does at degree 1."""
    from sagelaunch.modelparallel.tensor.delayed_init import delay_param_initialization, materialize

    with delay_param_initialization():
        model = BUILDERS[model_name](seed)
    materialize(model, "cpu")
    return model


def reference_run(model_name: str, steps: int, n: int, optimizer: str = "sgd", clip: float | None = None,
                  delayed: bool = False) -> dict:
    """Single process, whole global batch: the loss and every gradient of each step (clipped to a global L2
    norm of `clip`, as sharded data parallelism does; built with delayed initialization if `delayed`)."""
    model = build_delayed(model_name) if delayed else BUILDERS[model_name]()
    opt = make_optimizer(optimizer, model.parameters())
    losses, grads = [], []
    for s in range(steps):
        opt.zero_grad()
        loss = forward_loss(model_name, model, global_batch(model_name, s, n))
        loss.backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        losses.append(loss.item())
        grads.append({k: p.grad.detach().clone() for k, p in model.named_parameters() if p.grad is not None})
        opt.step()
    names = {id(p): k for k, p in model.named_parameters()}
    opt_state = {names[id(p)]: {k: v.clone() if isinstance(v, torch.Tensor) else v for k, v in s.items()}
                 for p, s in opt.state.items()}
    return {"losses": losses, "grads": grads, "opt_state": opt_state,
            "final_state": {k: v.detach().clone() for k, v in model.state_dict().items()}}
