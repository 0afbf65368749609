"""The DTensor plans (`parallelize_module` styles by module path) for the model families tensor parallelism
knows, and the attention attributes each rank's share of the heads needs afterwards.

- Hugging Face BERT/RoBERTa layers: attention.self.{query,key,value} and intermediate.dense column-wise,
  attention.output.dense and output.dense row-wise (Megatron layout: one all-reduce per block).
- Hugging Face GPT-2 (`Conv1D` layers): attn.c_attn (fused q|k|v, strided) and mlp.c_fc column-wise,
  attn.c_proj and mlp.c_proj row-wise; each rank runs num_heads / tp heads.
- Hugging Face models whose config has a `base_model_tp_plan` (Llama, Mistral, Qwen, GPT-NeoX, GPT-J, ...):
  that plan's "colwise"/"rowwise" Linear entries.
- Hugging Face LMs' input embedding and lm_head (tied or not): vocab-parallel (rows of the vocabulary sharded,
  embedding output all-reduced, logits all-gathered) when tensor_parallel_degree divides the vocabulary;
  otherwise they stay replicated, as other embeddings (positions, token types) do.
- smp.nn.DistributedAttentionLayer (query/key/value column-wise, dense row-wise) and
  DistributedTransformerOutputLayer (dense1 column-wise, dense2 row-wise), marked or not.
- nn.Sequential stacks of nn.Linear: consecutive Linear pairs (only parameter-free modules such as activations
  or dropout between them) become column-wise + row-wise.
Everything else is replicated over the tensor-parallel ranks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

import torch.nn as nn

from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.tensor.tp_marks import is_marked
from sagelaunch.modelparallel.tensor.tp_styles import Conv1DColwiseParallel, Conv1DRowwiseParallel, is_conv1d

# attention attributes that count heads (or their columns): each rank keeps 1/tp of them
HEAD_ATTRIBUTES = ("num_heads", "num_attention_heads", "num_key_value_heads", "split_size", "all_head_size",
                   "local_attention_size")


@dataclass
class Plan:
    styles: dict[str, Any] = field(default_factory=dict)  # module path → ParallelStyle
    attention: list[Any] = field(default_factory=list)  # modules whose HEAD_ATTRIBUTES become per-rank
    covered: list[str] = field(default_factory=list)  # module paths whose subtree is planned

    def add(self, other: "Plan") -> None:
        self.styles.update(other.styles)
        self.attention.extend(other.attention)
        self.covered.extend(other.covered)

    def localize_heads(self, tp: int) -> None:
        for module in self.attention:
            for attr in HEAD_ATTRIBUTES:
                value = getattr(module, attr, None)
                if isinstance(value, int) and not isinstance(value, bool):
                    setattr(module, attr, value // tp)


def _divisors(n: int) -> str:
    return ", ".join(str(d) for d in range(1, n + 1) if n % d == 0)


def check_divides(tp: int, what: str, value: int, where: str) -> None:
    if value % tp:
        raise SMPValidationError(
            f"tensor_parallel_degree={tp} does not divide {what}={value} of {where or 'the model'}; "
            f"allowed degrees: {_divisors(value)}; change tensor_parallel_degree or the model's {what}"
        )


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


# ----- BERT / RoBERTa
def is_bert_layer(m) -> bool:
    att = getattr(m, "attention", None)
    return (att is not None and hasattr(getattr(att, "self", None), "query") and hasattr(m, "intermediate")
            and hasattr(getattr(m, "output", None), "dense"))


def bert_layer_plan(name: str, layer, tp: int) -> Plan:
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    check_divides(tp, "num_attention_heads", layer.attention.self.num_attention_heads, name)
    check_divides(tp, "intermediate_size", layer.intermediate.dense.out_features, name)
    styles = {"attention.self.query": ColwiseParallel(), "attention.self.key": ColwiseParallel(),
              "attention.self.value": ColwiseParallel(), "attention.output.dense": RowwiseParallel(),
              "intermediate.dense": ColwiseParallel(), "output.dense": RowwiseParallel()}
    return Plan({_join(name, k): v for k, v in styles.items()}, [layer.attention.self], [name])


# ----- GPT-2 (Conv1D)
def is_gpt2_block(m) -> bool:
    attn, mlp = getattr(m, "attn", None), getattr(m, "mlp", None)
    return (is_conv1d(getattr(attn, "c_attn", None)) and is_conv1d(getattr(attn, "c_proj", None))
            and is_conv1d(getattr(mlp, "c_fc", None)) and is_conv1d(getattr(mlp, "c_proj", None)))


def gpt2_block_plan(name: str, block, tp: int) -> Plan:
    attn = block.attn
    if getattr(attn, "is_cross_attention", False) or hasattr(block, "crossattention"):
        raise SMPValidationError(
            f"tensor parallelism of {name}: GPT-2 cross-attention (add_cross_attention=True) is not supported; "
            "build the model with add_cross_attention=False or set tensor_parallel_degree=1")
    check_divides(tp, "num_heads", attn.num_heads, _join(name, "attn"))
    check_divides(tp, "n_inner", block.mlp.c_fc.nf, _join(name, "mlp.c_fc"))
    styles = {"attn.c_attn": Conv1DColwiseParallel(fused=3), "attn.c_proj": Conv1DRowwiseParallel(),
              "mlp.c_fc": Conv1DColwiseParallel(), "mlp.c_proj": Conv1DRowwiseParallel()}
    return Plan({_join(name, k): v for k, v in styles.items()}, [attn], [name])


# ----- Hugging Face base_model_tp_plan (Linear layers)
REPLICATED_STYLES = ("embedding_rowwise",)  # embeddings stay whole on every rank


def hf_tp_plan_of(m) -> dict[str, str] | None:
    """The `base_model_tp_plan` of a Hugging Face base model (not of its head wrapper)."""
    config = getattr(m, "config", None)
    plan = getattr(config, "base_model_tp_plan", None)
    prefix = getattr(m, "base_model_prefix", None)
    if not plan or prefix is None or hasattr(getattr(m, prefix, None), "named_modules"):
        return None  # a head wrapper (…ForCausalLM): its base model is found below it
    return dict(plan)


def hf_base_plan(name: str, base, tp: int) -> Plan:
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    config = base.config
    for attr in ("num_attention_heads", "num_key_value_heads"):
        value = getattr(config, attr, None)
        if isinstance(value, int):
            check_divides(tp, attr, value, f"{name or type(base).__name__} (config.{attr})")
    styles_by_name = {"colwise": ColwiseParallel, "rowwise": RowwiseParallel}
    plan = Plan(covered=[name])
    modules = dict(base.named_modules())
    for pattern, style in (hf_tp_plan_of(base) or {}).items():
        regex = re.compile("^" + re.escape(pattern).replace(r"\*", r"[^.]+") + "$")
        for path, target in modules.items():
            if not regex.match(path) or not is_marked(target):
                continue
            if style in REPLICATED_STYLES:
                continue
            if style not in styles_by_name or not isinstance(target, nn.Linear):
                raise SMPValidationError(
                    f"tensor parallelism of {_join(name, path)} ({type(target).__name__}): the model's "
                    f"base_model_tp_plan style {style!r} is not supported (supported: 'colwise'/'rowwise' on "
                    f"nn.Linear, {', '.join(REPLICATED_STYLES)} kept replicated); set tensor_parallel_degree=1")
            if style == "colwise":
                check_divides(tp, "out_features", target.out_features, _join(name, path))
                parent = modules[path.rsplit(".", 1)[0]] if "." in path else base
                if parent not in plan.attention:
                    plan.attention.append(parent)
            plan.styles[_join(name, path)] = styles_by_name[style]()
    return plan


# ----- smp.nn.DistributedAttentionLayer / DistributedTransformerOutputLayer (always distributed, as SMP's are)
SMP_NN_MODULE = "sagelaunch.modelparallel.nn.transformer"  # smp.nn's layers, recognised without importing them


def is_smp_attention(m) -> bool:
    return type(m).__name__ == "DistributedAttentionLayer" and type(m).__module__ == SMP_NN_MODULE


def is_smp_output(m) -> bool:
    return type(m).__name__ == "DistributedTransformerOutputLayer" and type(m).__module__ == SMP_NN_MODULE


def smp_attention_plan(name: str, layer, tp: int) -> Plan:
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    check_divides(tp, "num_attention_heads", layer.num_attention_heads, name)
    styles = {"query": ColwiseParallel(), "key": ColwiseParallel(), "value": ColwiseParallel(),
              "dense": RowwiseParallel()}
    return Plan({_join(name, k): v for k, v in styles.items()}, [layer], [name])


def smp_output_plan(name: str, layer, tp: int) -> Plan:
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    check_divides(tp, "intermediate_size", layer.dense1.out_features, name)
    return Plan({_join(name, "dense1"): ColwiseParallel(), _join(name, "dense2"): RowwiseParallel()}, [], [name])


# ----- nn.Sequential of Linear pairs
def linear_stack_plan(name: str, seq, tp: int) -> Plan:
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    plan = Plan()
    pending = None  # a Linear waiting for its row-wise partner
    for child_name, child in seq.named_children():
        full = _join(name, child_name)
        if isinstance(child, nn.Linear):
            if pending is None:
                pending = (full, child)
                continue
            col_name, col = pending
            check_divides(tp, "out_features", col.out_features, col_name)
            plan.styles[col_name], plan.styles[full] = ColwiseParallel(), RowwiseParallel()
            pending = None
        elif any(True for _ in child.parameters()):
            pending = None  # a module with parameters (e.g. LayerNorm) needs the full feature dim
    if plan.styles:
        plan.covered.append(name)
    return plan


# ----- vocabulary-parallel input embedding and LM head
def vocab_parallel_plan(root, tp: int) -> Plan:
    from torch.distributed.tensor import Replicate
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel

    lm = root
    while not callable(getattr(lm, "get_input_embeddings", None)) and isinstance(getattr(lm, "module", None),
                                                                             nn.Module):
        lm = lm.module  # a wrapper holding the LM as .module (the SMP examples' FP16_Module)
    get_in, get_out = getattr(lm, "get_input_embeddings", None), getattr(lm, "get_output_embeddings", None)
    if not (callable(get_in) and callable(get_out)):
        return Plan()
    embedding, head = get_in(), get_out()
    smp_lm = type(lm).__module__ == SMP_NN_MODULE  # smp.nn layers: distributed unmarked
    if (not isinstance(embedding, nn.Embedding) or not isinstance(head, nn.Linear)
            or not (smp_lm or is_marked(embedding) and is_marked(head))
            or embedding.num_embeddings % tp or head.out_features % tp):
        return Plan()
    names = {id(m): n for n, m in root.named_modules()}
    styles = {names[id(embedding)]: RowwiseParallel(input_layouts=Replicate(), output_layouts=Replicate()),
              names[id(head)]: ColwiseParallel(output_layouts=Replicate())}
    return Plan(styles)


# (recognise, plan builder) in the order they are tried on each marked module
# (Hugging Face base models: the plan's target modules must be marked, not the base itself)
FAMILIES: list[tuple[Callable[[Any], bool], Callable[[str, Any, int], Plan]]] = [
    (is_smp_attention, smp_attention_plan),
    (is_smp_output, smp_output_plan),
    (lambda m: is_bert_layer(m) and is_marked(m), bert_layer_plan),
    (lambda m: is_gpt2_block(m) and is_marked(m), gpt2_block_plan),
    (lambda m: hf_tp_plan_of(m) is not None, hf_base_plan),
    (lambda m: isinstance(m, nn.Sequential) and is_marked(m), linear_stack_plan),
]


def _inside(name: str, covered: list[str]) -> bool:
    return any(c == "" or name == c or name.startswith(c + ".") for c in covered)


def build_plan(module, tp: int) -> Plan:
    """The plan for every marked module we know how to distribute."""
    plan = Plan()
    for name, m in module.named_modules():
        if _inside(name, plan.covered):
            continue
        for recognise, make in FAMILIES:
            if recognise(m):
                plan.add(make(name, m, tp))
                break
    if plan.styles:  # layers are distributed: the vocabulary too, where it divides
        plan.add(vocab_parallel_plan(module, tp))
    return plan
