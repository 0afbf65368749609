"""A model's shape as the planner needs it: every parameter tensor, where it sits (before the layer stack, in one
of its layers, after it) and how sagelaunch's tensor parallelism splits it; and the dimensions activations and
FLOPs depend on.

The placement follows sagelaunch.modelparallel: the pipeline units are the children of the layer stack (the
nn.ModuleList holding the most parameters); modules before it (embeddings) live on the first stage, those after
it (final norm, heads) on the last; a weight tied across stages (GPT-2's wte and lm_head) is held by each stage
that uses it. Tensor parallelism (modelparallel/tensor/tp_plans.py) splits column-wise layers' weight and bias and
row-wise layers' weight (their bias stays whole), the vocabulary of a language model's embedding and head when the
degree divides it, and keeps norms, position and token-type embeddings whole.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Split = Literal["split", "vocab", "whole"]  # split by tp (must divide), split by tp where it divides, never split
Family = Literal["gpt2", "bert", "roberta", "llama", "generic"]


class Tensor(BaseModel):
    """One parameter tensor (or several identical ones, `count`)."""

    model_config = ConfigDict(frozen=True)

    name: str
    numel: int = Field(ge=0)
    split: Split = "whole"
    divides: int = Field(1, ge=1, description="the dimension tp must divide for a 'split' tensor (heads, ffn, …)")
    divides_name: str = ""
    tied: bool = Field(False, description="a head tied to the input embedding: held again by the last stage only "
                                          "when it is not also the first")
    tp_module: bool = Field(False, description="in a module tensor parallelism distributes (its tensors become "
                                               "DTensors, which data parallelism's DDP leaves out)")


class ModelShape(BaseModel):
    """Dimensions, and the parameter tensors before, in, and after the layer stack."""

    model_config = ConfigDict(frozen=True)

    family: Family
    layers: int = Field(ge=1)
    hidden: int = Field(ge=1)
    heads: int = Field(ge=1)
    kv_heads: int = Field(ge=1)
    ffn: int = Field(ge=1)
    vocab: int = Field(ge=1)
    seq_len: int = Field(ge=1, description="the sequence length the plan assumes")
    logits: bool = Field(False, description="the last stage computes vocabulary-sized logits (a language-model head)")
    pre: tuple[Tensor, ...]
    units: tuple[tuple[Tensor, ...], ...]  # one entry per layer of the stack
    post: tuple[Tensor, ...]
    source: str = ""

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def parameters(self) -> int:
        """Distinct parameters (a tied head counted once)."""
        return sum(t.numel for part in (self.pre, *self.units, self.post) for t in part if not t.tied)

    @property
    def layer_parameters(self) -> int:
        return sum(t.numel for unit in self.units for t in unit)


def _t(name: str, numel: int, split: Split = "whole", divides: int = 1, divides_name: str = "",
       tied: bool = False, tp_module: bool | None = None) -> Tensor:
    return Tensor(name=name, numel=numel, split=split, divides=divides, divides_name=divides_name, tied=tied,
                  tp_module=split == "split" if tp_module is None else tp_module)


def _norm(name: str, h: int) -> tuple[Tensor, Tensor]:
    return _t(f"{name}.weight", h), _t(f"{name}.bias", h)


def _linear(name: str, fan_in: int, fan_out: int) -> tuple[Tensor, Tensor]:
    return _t(f"{name}.weight", fan_in * fan_out), _t(f"{name}.bias", fan_out)


def _row_bias(name: str, numel: int) -> Tensor:
    """A row-wise layer's bias: whole on every tp rank, but a (replicated) DTensor."""
    return _t(name, numel, tp_module=True)


def gpt2_layer(h: int, heads: int, ffn: int) -> tuple[Tensor, ...]:
    """Hugging Face GPT2Block: ln_1, attn.c_attn (fused q|k|v, column), attn.c_proj (row), ln_2, mlp.c_fc (column),
    mlp.c_proj (row)."""
    return (*_norm("ln_1", h), _t("attn.c_attn.weight", 3 * h * h, "split", heads, "num_heads"),
            _t("attn.c_attn.bias", 3 * h, "split", heads, "num_heads"),
            _t("attn.c_proj.weight", h * h, "split", heads, "num_heads"), _row_bias("attn.c_proj.bias", h),
            *_norm("ln_2", h), _t("mlp.c_fc.weight", h * ffn, "split", ffn, "n_inner"),
            _t("mlp.c_fc.bias", ffn, "split", ffn, "n_inner"),
            _t("mlp.c_proj.weight", ffn * h, "split", ffn, "n_inner"), _row_bias("mlp.c_proj.bias", h))


def bert_layer(h: int, heads: int, ffn: int) -> tuple[Tensor, ...]:
    """Hugging Face BertLayer / RobertaLayer: query, key, value (column), attention.output.dense (row),
    its LayerNorm, intermediate.dense (column), output.dense (row), its LayerNorm."""
    qkv = [_t(f"attention.self.{n}.{w}", h * h if w == "weight" else h, "split", heads, "num_attention_heads")
           for n in ("query", "key", "value") for w in ("weight", "bias")]
    return (*qkv, _t("attention.output.dense.weight", h * h, "split", heads, "num_attention_heads"),
            _row_bias("attention.output.dense.bias", h), *_norm("attention.output.LayerNorm", h),
            _t("intermediate.dense.weight", h * ffn, "split", ffn, "intermediate_size"),
            _t("intermediate.dense.bias", ffn, "split", ffn, "intermediate_size"),
            _t("output.dense.weight", ffn * h, "split", ffn, "intermediate_size"), _row_bias("output.dense.bias", h),
            *_norm("output.LayerNorm", h))


def llama_layer(h: int, heads: int, kv_heads: int, ffn: int, head_dim: int, bias: bool) -> tuple[Tensor, ...]:
    """Hugging Face LlamaDecoderLayer / MistralDecoderLayer: q/k/v_proj, gate/up_proj column-wise, o_proj and
    down_proj row-wise (the config's base_model_tp_plan), two RMSNorms."""
    q, kv = heads * head_dim, kv_heads * head_dim
    out = [_t("self_attn.q_proj.weight", h * q, "split", heads, "num_attention_heads"),
           _t("self_attn.k_proj.weight", h * kv, "split", kv_heads, "num_key_value_heads"),
           _t("self_attn.v_proj.weight", h * kv, "split", kv_heads, "num_key_value_heads"),
           _t("self_attn.o_proj.weight", q * h, "split", heads, "num_attention_heads")]
    if bias:
        out += [_t("self_attn.q_proj.bias", q, "split", heads, "num_attention_heads"),
                _t("self_attn.k_proj.bias", kv, "split", kv_heads, "num_key_value_heads"),
                _t("self_attn.v_proj.bias", kv, "split", kv_heads, "num_key_value_heads"),
                _row_bias("self_attn.o_proj.bias", h)]
    out += [_t("mlp.gate_proj.weight", h * ffn, "split", ffn, "intermediate_size"),
            _t("mlp.up_proj.weight", h * ffn, "split", ffn, "intermediate_size"),
            _t("mlp.down_proj.weight", ffn * h, "split", ffn, "intermediate_size"),
            _t("input_layernorm.weight", h), _t("post_attention_layernorm.weight", h)]
    return tuple(out)
