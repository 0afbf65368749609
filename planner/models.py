"""ModelShape from what a user has: a Hugging Face config.json (a path, a dict, or a config object; read offline,
never downloaded) or explicit dimensions. GPT-2 and Llama/Mistral are planned as causal LMs (the head on the
vocabulary, tied as their configs say), BERT/RoBERTa as sequence classifiers (the model classes sagelaunch's
pipeline partitioning knows)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.suggest import did_you_mean, fix_from_hint
from sagelaunch.planner.shape import (
    Family,
    ModelShape,
    Tensor,
    _linear,
    _norm,
    _t,
    bert_layer,
    gpt2_layer,
    llama_layer,
)

MODEL_TYPES: dict[str, Family] = {"gpt2": "gpt2", "bert": "bert", "roberta": "roberta", "llama": "llama",
                                  "mistral": "llama"}
FAMILIES = ("gpt2", "bert", "roberta", "llama")
HEADS = ("classifier", "masked_lm")


def _positive(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SagelaunchError(f"{field}={value!r} must be a whole number ≥ 1", field=field, value=value,
                              allowed="an integer ≥ 1", fix=f"give {field.rsplit('.', 1)[-1]} as a positive integer")
    return value


def model_from_dims(family: str, *, layers: int, hidden: int, heads: int, vocab: int, seq_len: int,
                    kv_heads: int | None = None, ffn: int | None = None, max_positions: int | None = None,
                    tied_embeddings: bool | None = None, num_labels: int = 2, type_vocab_size: int = 2,
                    attention_bias: bool = False, head: str = "classifier",
                    source: str = "dimensions") -> ModelShape:
    """A model of a known family from its dimensions (ffn defaults to 4·hidden for GPT-2/BERT). head (BERT/RoBERTa):
    "classifier" (…ForSequenceClassification) or "masked_lm" (…ForMaskedLM, its decoder tied to the embedding)."""
    if family not in FAMILIES:
        hint = did_you_mean(family, FAMILIES)
        raise SagelaunchError(f"model family {family!r} is not known{hint}; allowed: {', '.join(FAMILIES)}",
                              field="family", value=family, allowed=", ".join(FAMILIES),
                              fix=fix_from_hint(hint, "pick one, or pass a function that builds the model "
                                                      "(planner.model_from_builder)"))
    fam: Family = family  # type: ignore[assignment]
    layers, hidden, heads, vocab, seq_len = (_positive(f, v) for f, v in (
        ("layers", layers), ("hidden", hidden), ("heads", heads), ("vocab", vocab), ("seq_len", seq_len)))
    kv = _positive("kv_heads", kv_heads) if kv_heads is not None else heads
    inner = _positive("ffn", ffn) if ffn is not None else 4 * hidden
    positions = _positive("max_positions", max_positions) if max_positions is not None else seq_len
    if hidden % heads:
        raise SagelaunchError(f"hidden={hidden} is not a multiple of heads={heads}", field="heads", value=heads,
                              allowed=f"a divisor of hidden={hidden}", fix="check the model's dimensions")
    if seq_len > positions and fam != "llama":
        raise SagelaunchError(f"seq_len={seq_len} exceeds the model's {positions} positions", field="seq_len",
                              value=seq_len, allowed=f"1..{positions}", fix=f"use seq_len ≤ {positions}")
    h = hidden
    pre: tuple[Tensor, ...]
    post: tuple[Tensor, ...]
    if fam == "gpt2":
        unit = gpt2_layer(h, heads, inner)
        tie = True if tied_embeddings is None else tied_embeddings
        pre = (_t("transformer.wte", vocab * h, "vocab"), _t("transformer.wpe", positions * h))
        post = (*_norm("transformer.ln_f", h), _t("lm_head", vocab * h, "vocab", tied=tie))
    elif fam in ("bert", "roberta"):
        unit = bert_layer(h, heads, inner)
        pre = (_t("embeddings.word_embeddings", vocab * h), _t("embeddings.position_embeddings", positions * h),
               _t("embeddings.token_type_embeddings", type_vocab_size * h), *_norm("embeddings.LayerNorm", h))
        if head not in HEADS:
            raise SagelaunchError(f"head={head!r} is not known; allowed: {', '.join(HEADS)}", field="head",
                                  value=head, allowed=", ".join(HEADS), fix="pick one of them")
        if head == "masked_lm":  # the word embedding is vocabulary-parallel with its tied decoder
            pre = (_t("embeddings.word_embeddings", vocab * h, "vocab"), *pre[1:])
            post = (*_linear("lm_head.transform.dense", h, h), *_norm("lm_head.transform.LayerNorm", h),
                    _t("lm_head.decoder.weight", vocab * h, "vocab", tied=True), _t("lm_head.bias", vocab, "vocab"))
        elif fam == "bert":
            post = (*_linear("bert.pooler.dense", h, h), *_linear("classifier", h, num_labels))
        else:
            post = (*_linear("classifier.dense", h, h), *_linear("classifier.out_proj", h, num_labels))
    else:
        if heads % kv:
            raise SagelaunchError(f"heads={heads} is not a multiple of kv_heads={kv}", field="kv_heads", value=kv,
                                  allowed=f"a divisor of heads={heads}", fix="check the model's dimensions")
        unit = llama_layer(h, heads, kv, inner, h // heads, attention_bias)
        tie = False if tied_embeddings is None else tied_embeddings
        pre = (_t("model.embed_tokens", vocab * h, "vocab"),)
        post = (_t("model.norm.weight", h), _t("lm_head", vocab * h, "vocab", tied=tie))
    logits = fam in ("gpt2", "llama") or head == "masked_lm"
    return ModelShape(family=fam, layers=layers, hidden=h, heads=heads, kv_heads=kv, ffn=inner, vocab=vocab,
                      seq_len=seq_len, logits=logits, pre=pre, units=(unit,) * layers, post=post, source=source)


# config.json key for each dimension, per family (the first present wins)
KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "gpt2": {"layers": ("n_layer",), "hidden": ("n_embd",), "heads": ("n_head",), "vocab": ("vocab_size",),
             "max_positions": ("n_positions",)},
    "bert": {"layers": ("num_hidden_layers",), "hidden": ("hidden_size",), "heads": ("num_attention_heads",),
             "vocab": ("vocab_size",), "ffn": ("intermediate_size",), "max_positions": ("max_position_embeddings",)},
    "llama": {"layers": ("num_hidden_layers",), "hidden": ("hidden_size",), "heads": ("num_attention_heads",),
              "vocab": ("vocab_size",), "ffn": ("intermediate_size",),
              "max_positions": ("max_position_embeddings",)},
}
KEYS["roberta"] = KEYS["bert"]


def _config_dict(config: Any) -> tuple[dict[str, Any], str]:
    if isinstance(config, dict):
        return config, "config"
    if isinstance(config, (str, Path)):
        path = Path(config)
        if path.is_dir():
            path = path / "config.json"
        try:
            return json.loads(path.read_text()), path.name
        except FileNotFoundError:
            raise SagelaunchError(f"model config {str(path)!r} does not exist", field="model", value=str(path),
                                  allowed="a config.json file (or its folder)", fix="check the path") from None
        except json.JSONDecodeError as err:
            raise SagelaunchError(f"model config {path.name} is not JSON ({err.msg}, line {err.lineno})",
                                  field="model", value=path.name, allowed="a Hugging Face config.json",
                                  fix="check the file") from None
    to_dict = getattr(config, "to_dict", None)  # a transformers PretrainedConfig
    if callable(to_dict):
        return to_dict(), type(config).__name__
    raise SagelaunchError(f"model={type(config).__name__} is not a model description", field="model",
                          value=type(config).__name__,
                          allowed="a config.json path, a config dict or object, ModelShape",
                          fix="pass the model's config.json or planner.model_from_dims(...)")


def model_from_config(config: Any, seq_len: int | None = None) -> ModelShape:
    """From a Hugging Face config (path to config.json or its folder, a dict, or a PretrainedConfig)."""
    data, where = _config_dict(config)
    model_type = data.get("model_type")
    family = MODEL_TYPES.get(str(model_type))
    if family is None:
        allowed = ", ".join(MODEL_TYPES)
        hint = did_you_mean(str(model_type), tuple(MODEL_TYPES))
        raise SagelaunchError(f"{where}: model_type={model_type!r} is not one the planner knows{hint}; allowed: "
                              f"{allowed}", field=f"{where}.model_type", value=model_type, allowed=allowed,
                              fix=fix_from_hint(hint, "pass explicit dimensions (planner.model_from_dims) or a "
                                                      "function that builds the model (planner.model_from_builder)"))
    dims: dict[str, Any] = {}
    for dim, keys in KEYS[family].items():
        key = next((k for k in keys if data.get(k) is not None), None)
        if key is None:
            raise SagelaunchError(f"{where}: {keys[0]} is missing (the model's {dim})", field=f"{where}.{keys[0]}",
                                  value=None, allowed=f"the {model_type} config's {keys[0]} (an integer ≥ 1)",
                                  fix=f"add {keys[0]} to the config, or pass explicit dimensions")
        dims[dim] = _positive(f"{where}.{key}", data[key])
    if family == "gpt2" and data.get("n_inner") is not None:
        dims["ffn"] = _positive(f"{where}.n_inner", data["n_inner"])
    if family == "llama":
        dims["kv_heads"] = data.get("num_key_value_heads") or dims["heads"]
        dims["attention_bias"] = bool(data.get("attention_bias", False))
    if family in ("bert", "roberta"):
        dims["type_vocab_size"] = int(data.get("type_vocab_size", 2))
        dims["num_labels"] = len(data["id2label"]) if isinstance(data.get("id2label"), dict) else 2
        architectures = data.get("architectures") or []
        dims["head"] = "masked_lm" if any(str(a).endswith("ForMaskedLM") for a in architectures) else "classifier"
    tie = data.get("tie_word_embeddings")
    if tie is not None and family in ("gpt2", "llama"):
        dims["tied_embeddings"] = bool(tie)
    seq = seq_len if seq_len is not None else dims["max_positions"]
    if family == "roberta":  # RoBERTa's positions start after the padding index
        seq = seq_len if seq_len is not None else dims["max_positions"] - 2
    return model_from_dims(family, seq_len=seq, source=where, **dims)
