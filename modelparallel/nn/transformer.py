"""SMP v1's smp.nn.DistributedTransformer* layers, with SMP's constructor arguments and tuple-in/tuple-out forward
(the library documentation's reference implementations). Sizes are global: smp.DistributedModel with
tensor_parallel_degree > 1 distributes them (tp_plans.py: query/key/value and dense1 column-wise, dense and dense2
row-wise, each rank runs num_attention_heads / tp heads), whether or not they were marked for tensor parallelism.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.tensor.smp_init import normal_initialization

MASKED = -10000.0  # what SMP's (and BERT's) additive attention masks put on masked positions


class _Init(nn.Module):
    """use_normal_initialization: normal(0, initializer_range) weights and zero biases, else PyTorch's defaults."""

    def _initialize(self, use_normal_initialization: bool, initializer_range: float) -> None:
        if use_normal_initialization:
            normal_initialization(self, initializer_range)


def _check_layernorms(pre_layernorm: bool, post_layernorm: bool) -> None:
    if not (pre_layernorm or post_layernorm):
        raise SMPValidationError("smp.nn: at least one of pre_layernorm and post_layernorm must be True",
                                 field="pre_layernorm", value=False, allowed="True for pre_layernorm or post_layernorm",
                                 fix="set pre_layernorm=True or post_layernorm=True")


class DistributedAttentionLayer(_Init):
    def __init__(self, num_attention_heads=32, attention_head_size=32, hidden_size=1024, attention_dropout_prob=0.1,
                 hidden_dropout_prob=0.1, layernorm_epsilon=1e-5, initializer_range=0.02,
                 use_normal_initialization=False, cross_attention=False, causal_mask_size=None, pre_layernorm=False,
                 post_layernorm=True):
        super().__init__()
        _check_layernorms(pre_layernorm, post_layernorm)
        self.num_attention_heads, self.attention_head_size = num_attention_heads, attention_head_size
        self.local_attention_size = num_attention_heads * attention_head_size  # per rank once distributed
        self.cross_attention = cross_attention
        self.query = nn.Linear(hidden_size, self.local_attention_size)
        self.key = nn.Linear(hidden_size, self.local_attention_size)
        self.value = nn.Linear(hidden_size, self.local_attention_size)
        self.dense = nn.Linear(self.local_attention_size, hidden_size)
        self.dropout1, self.dropout2 = nn.Dropout(attention_dropout_prob), nn.Dropout(hidden_dropout_prob)
        self.pre_layernorm = nn.LayerNorm(hidden_size, eps=layernorm_epsilon) if pre_layernorm else None
        self.layernorm = nn.LayerNorm(hidden_size, eps=layernorm_epsilon) if post_layernorm else None
        causal = None
        if causal_mask_size is not None:
            causal = torch.tril(torch.ones(causal_mask_size, causal_mask_size, dtype=torch.bool)).view(
                1, 1, causal_mask_size, causal_mask_size)
        self.register_buffer("causal_mask", causal, persistent=False)
        self._initialize(use_normal_initialization, initializer_range)

    def _heads(self, tensor):
        return tensor.reshape(*tensor.shape[:-1], -1, self.attention_head_size).permute(0, 2, 1, 3)

    def forward(self, inputs):
        if self.cross_attention:
            hidden_states, cross_states, attention_mask = inputs
        else:
            (hidden_states, attention_mask), cross_states = inputs, None
        norm_states = self.pre_layernorm(hidden_states) if self.pre_layernorm is not None else hidden_states
        source = cross_states if self.cross_attention else norm_states
        query, key, value = self._heads(self.query(norm_states)), self._heads(self.key(source)), \
            self._heads(self.value(source))
        scores = torch.matmul(query, key.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        if not self.cross_attention and self.causal_mask is not None:
            q, k = scores.shape[-2:]
            scores = torch.where(self.causal_mask[:, :, k - q:k, :k], scores, torch.full_like(scores, MASKED))
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = self.dropout1(F.softmax(scores, dim=-1))
        context = torch.matmul(probs, value).permute(0, 2, 1, 3)
        context = context.reshape(*context.shape[:-2], -1)
        out = self.dropout2(self.dense(context))
        return self.layernorm(out + hidden_states) if self.layernorm is not None else out


class DistributedTransformerOutputLayer(_Init):
    def __init__(self, hidden_size=1024, intermediate_size=4096, hidden_dropout_prob=0.1, activation="gelu",
                 layernorm_epsilon=1e-5, initializer_range=0.02, use_normal_initialization=False,
                 pre_layernorm=False, post_layernorm=True, fp32_residual_addition=False):
        super().__init__()
        _check_layernorms(pre_layernorm, post_layernorm)
        if activation not in ("gelu", "relu"):
            raise SMPValidationError(f"smp.nn: activation={activation!r} is not supported; allowed: 'gelu', 'relu'",
                                     field="activation", value=activation, allowed="gelu, relu", fix="use 'gelu' or 'relu'")
        self.activation = F.gelu if activation == "gelu" else F.relu
        self.dense1 = nn.Linear(hidden_size, intermediate_size)
        self.dense2 = nn.Linear(intermediate_size, hidden_size)
        self.dropout = nn.Dropout(hidden_dropout_prob)
        self.pre_layernorm = nn.LayerNorm(hidden_size, eps=layernorm_epsilon) if pre_layernorm else None
        self.layernorm = nn.LayerNorm(hidden_size, eps=layernorm_epsilon) if post_layernorm else None
        self.fp32_residual_addition = fp32_residual_addition
        self._initialize(use_normal_initialization, initializer_range)

    def forward(self, inp):
        norm_inp = self.pre_layernorm(inp) if self.pre_layernorm is not None else inp
        out = self.dropout(self.dense2(self.activation(self.dense1(norm_inp))))
        if self.layernorm is None:
            return out
        if self.fp32_residual_addition:
            return self.layernorm((inp.float() + out.float()).to(inp.dtype))
        return self.layernorm(inp + out)


_LAYER_ARGS = ("num_attention_heads", "attention_head_size", "hidden_size", "attention_dropout_prob",
               "hidden_dropout_prob", "layernorm_epsilon", "initializer_range", "use_normal_initialization",
               "pre_layernorm", "post_layernorm")


class DistributedTransformerLayer(nn.Module):
    def __init__(self, num_attention_heads=32, attention_head_size=32, hidden_size=1024, intermediate_size=4096,
                 attention_dropout_prob=0.1, hidden_dropout_prob=0.1, activation="gelu", layernorm_epsilon=1e-5,
                 initializer_range=0.02, use_normal_initialization=False, causal_mask_size=None,
                 add_cross_attention=False, pre_layernorm=False, post_layernorm=True):
        super().__init__()
        args = {k: v for k, v in locals().items() if k in _LAYER_ARGS}
        self.add_cross_attention = add_cross_attention
        self.attention = DistributedAttentionLayer(causal_mask_size=causal_mask_size, **args)
        if add_cross_attention:
            self.cross_attention = DistributedAttentionLayer(cross_attention=True, **args)
        self.output = DistributedTransformerOutputLayer(
            hidden_size=hidden_size, intermediate_size=intermediate_size, hidden_dropout_prob=hidden_dropout_prob,
            activation=activation, layernorm_epsilon=layernorm_epsilon, initializer_range=initializer_range,
            use_normal_initialization=use_normal_initialization, pre_layernorm=pre_layernorm,
            post_layernorm=post_layernorm)

    def forward(self, inputs):
        if self.add_cross_attention:
            hidden_states, cross_states, attention_mask, cross_mask = inputs
        else:
            hidden_states, attention_mask = inputs
        out = self.attention((hidden_states, attention_mask))
        if self.add_cross_attention:
            out = self.cross_attention((out, cross_states, cross_mask))
        out = self.output(out)
        return (out, cross_states, attention_mask, cross_mask) if self.add_cross_attention else (out, attention_mask)


class DistributedTransformer(nn.Module):
    def __init__(self, num_layers=12, num_attention_heads=32, attention_head_size=32, hidden_size=1024,
                 intermediate_size=4096, attention_dropout_prob=0.1, hidden_dropout_prob=0.1, activation="gelu",
                 layernorm_epsilon=1e-5, initializer_range=0.02, use_normal_initialization=False,
                 causal_mask_size=None, add_cross_attention=False, pre_layernorm=False, post_layernorm=True):
        super().__init__()
        args = {k: v for k, v in locals().items() if k not in ("self", "__class__", "num_layers")}
        # a ModuleList of layers: pipeline parallelism partitions it like any layer stack
        self.layers = nn.ModuleList(DistributedTransformerLayer(**args) for _ in range(num_layers))
        both = pre_layernorm and post_layernorm  # SMP: then also a LayerNorm on the input and the output
        self.input_layernorm = nn.LayerNorm(hidden_size, eps=layernorm_epsilon) if both else None
        self.output_layernorm = nn.LayerNorm(hidden_size, eps=layernorm_epsilon) if both else None

    def forward(self, inputs):
        if self.input_layernorm is not None:
            inputs = (self.input_layernorm(inputs[0]), *inputs[1:])
        for layer in self.layers:
            inputs = layer(inputs)
        if self.output_layernorm is not None:
            inputs = (self.output_layernorm(inputs[0]), *inputs[1:])
        return inputs


class DistributedTransformerLMHead(nn.Module):
    def __init__(self, num_layers=12, num_attention_heads=32, attention_head_size=32, hidden_size=1024,
                 intermediate_size=4096, vocab_size=30522, num_positions=1024, attention_dropout_prob=0.1,
                 hidden_dropout_prob=0.1, activation="gelu", layernorm_epsilon=1e-5, num_token_types=0,
                 causal_mask_size=None, add_cross_attention=False, add_lm_head=True, initializer_range=0.02,
                 use_normal_initialization=False, pre_layernorm=False, post_layernorm=True):
        super().__init__()
        args = {k: v for k, v in locals().items()
                if k not in ("self", "__class__", "vocab_size", "num_positions", "num_token_types", "add_lm_head")}
        self.add_cross_attention = add_cross_attention
        self.word_embedding = nn.Embedding(vocab_size, hidden_size)
        self.position_embedding = nn.Embedding(num_positions, hidden_size)
        self.token_type_embedding = nn.Embedding(num_token_types, hidden_size) if num_token_types > 0 else None
        self.dropout = nn.Dropout(hidden_dropout_prob)
        self.transformer = DistributedTransformer(**args)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False) if add_lm_head else None
        if use_normal_initialization:
            for emb in (self.word_embedding, self.position_embedding, self.token_type_embedding):
                if emb is not None:
                    nn.init.normal_(emb.weight, std=initializer_range)
        if self.lm_head is not None:
            self.lm_head.weight = self.word_embedding.weight  # SMP: the LM head is tied to the word embeddings

    def get_input_embeddings(self):
        return self.word_embedding

    def get_output_embeddings(self):
        return self.lm_head

    def forward(self, inputs):
        """inputs: (input_ids, attention_mask, token_type_ids, position_ids, labels), or with add_cross_attention
        (input_ids, attention_mask, token_type_ids, position_ids, cross_states, cross_mask, labels); attention
        masks are 0-1 with 1 on masked positions. Returns the LM logits (the hidden states without an LM head)."""
        if self.add_cross_attention:
            input_ids, attention_mask, token_type_ids, position_ids, cross_states, cross_mask, _labels = inputs
        else:
            input_ids, attention_mask, token_type_ids, position_ids, _labels = inputs
        if position_ids is None:
            position_ids = torch.arange(input_ids.shape[1], device=input_ids.device).unsqueeze(0)
        hidden = self.word_embedding(input_ids) + self.position_embedding(position_ids)
        if self.token_type_embedding is not None and token_type_ids is not None:
            hidden = hidden + self.token_type_embedding(token_type_ids)
        hidden = self.dropout(hidden)
        mask = None if attention_mask is None else attention_mask[:, None, None, :].to(hidden.dtype) * MASKED
        if self.add_cross_attention:
            cross = None if cross_mask is None else cross_mask[:, None, None, :].to(hidden.dtype) * MASKED
            hidden = self.transformer((hidden, cross_states, mask, cross))[0]
        else:
            hidden = self.transformer((hidden, mask))[0]
        return self.lm_head(hidden) if self.lm_head is not None else hidden
