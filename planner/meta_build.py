"""ModelShape from a function that builds the model, run on the meta device: every parameter's exact shape, no
memory, no download. Torch is imported here only, when this is called.

Placement as sagelaunch.modelparallel's pipeline partitioning does it (modelparallel/pipeline/stack.py): the layer
stack is the nn.ModuleList of two or more children holding the most parameters, its children the units; modules
before it go to the first stage, after it to the last; a parameter reachable under two names (a tied head) is held
by both ends. Tensor-parallel splits as modelparallel/tensor/tp_plans.py plans them for the families it knows: GPT-2's
Conv1D layers, BERT/RoBERTa layers, a Hugging Face config's base_model_tp_plan, and a language model's vocabulary.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.planner.shape import Family, ModelShape, Split, Tensor

# module-path suffix → (split, the config attribute tp must divide): column-wise layers split weight and bias,
# row-wise layers their weight (their bias stays whole but becomes a DTensor)
GPT2_STYLES = {"attn.c_attn": "col", "attn.c_proj": "row", "mlp.c_fc": "col", "mlp.c_proj": "row"}
BERT_STYLES = {"attention.self.query": "col", "attention.self.key": "col", "attention.self.value": "col",
               "attention.output.dense": "row", "intermediate.dense": "col", "output.dense": "row"}


def _family(config: Any) -> Family:
    model_type = getattr(config, "model_type", "")
    return {"gpt2": "gpt2", "bert": "bert", "roberta": "roberta", "llama": "llama",
            "mistral": "llama"}.get(model_type, "generic")  # type: ignore[return-value]


def _styles(family: Family, config: Any) -> dict[str, str]:
    if family == "gpt2":
        return GPT2_STYLES
    if family in ("bert", "roberta"):
        return BERT_STYLES
    plan = getattr(config, "base_model_tp_plan", None) or {}
    out = {}
    for pattern, style in plan.items():
        if style in ("colwise", "rowwise"):
            out[re.sub(r"^layers\.\*\.", "", pattern)] = "col" if style == "colwise" else "row"
    return out


def model_from_builder(build: Callable[[], Any], seq_len: int, source: str = "builder") -> ModelShape:
    """Run `build()` on the meta device (a Hugging Face model class's constructor, or any nn.Module factory)."""
    import torch
    import torch.nn as nn

    with torch.device("meta"):
        model = build()
    if not isinstance(model, nn.Module):
        raise SagelaunchError(f"the builder returned {type(model).__name__}, not a torch.nn.Module", field="model",
                              value=type(model).__name__, allowed="a function returning an nn.Module",
                              fix="return the model from the builder")
    stacks = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.ModuleList) and len(m) > 1]
    if not stacks:
        raise SagelaunchError(f"{type(model).__name__} has no layer stack (an nn.ModuleList of two or more layers)",
                              field="model", value=type(model).__name__, allowed="a model with a layer stack",
                              fix="put the layers in an nn.ModuleList, or pass explicit dimensions")
    stack_name, stack = max(stacks, key=lambda item: sum(p.numel() for p in item[1].parameters()))
    config = getattr(model, "config", None)
    family = _family(config)
    styles = _styles(family, config)
    embedding = model.get_input_embeddings() if hasattr(model, "get_input_embeddings") else None
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    vocab_params = {id(p) for m in (embedding, head) if m is not None for p in m.parameters(recurse=False)}
    vocab_parallel = isinstance(embedding, nn.Embedding) and isinstance(head, nn.Linear)
    modules = dict(model.named_modules())
    seen: dict[int, str] = {}  # tensor → where it was first met: pre, unit, post
    pre: list[Tensor] = []
    post: list[Tensor] = []
    units: list[list[Tensor]] = [[] for _ in stack]
    owner = {}
    for i, child in enumerate(stack):
        for p in child.parameters():
            owner[id(p)] = i
    passed_stack = False
    stack_param_ids = set(owner)
    for name, p in model.named_parameters(remove_duplicate=False):
        in_stack = id(p) in stack_param_ids
        passed_stack = passed_stack or in_stack
        module_path, _, leaf = name.rpartition(".")
        split: Split = "whole"
        tp_module = False
        divides = 1
        for suffix, style in styles.items():
            if module_path.endswith(suffix):
                tp_module = True
                split = "split" if style == "col" or leaf == "weight" else "whole"
                conv1d = type(modules[module_path]).__name__ == "Conv1D"  # GPT-2's (in, out) weights
                out_dim = p.shape[-1] if conv1d or p.dim() == 1 else p.shape[0]
                in_dim = p.shape[0] if conv1d else p.shape[-1]
                divides = int(out_dim if style == "col" else in_dim)
        if vocab_parallel and id(p) in vocab_params:
            split, tp_module = "vocab", True
        if id(p) in seen and seen[id(p)] != "pre":
            continue  # a second name for a tensor of the same stage (BERT's decoder bias): one tensor
        tied = id(p) in seen  # the embedding's weight, used again by a head after the stack
        place = "unit" if in_stack else "post" if passed_stack or tied else "pre"
        seen.setdefault(id(p), place)
        t = Tensor(name=name, numel=p.numel(), split=split, divides=divides, divides_name=f"{module_path} features",
                   tied=tied, tp_module=tp_module)
        if in_stack:
            units[owner[id(p)]].append(t)
        elif passed_stack or tied:
            post.append(t)
        else:
            pre.append(t)
    dims = _dims(config, stack, family)
    return ModelShape(family=family, layers=len(stack), seq_len=seq_len, pre=tuple(pre),
                      units=tuple(tuple(u) for u in units), post=tuple(post), source=source,
                      logits=vocab_parallel, **dims)


def _dims(config: Any, stack: Any, family: Family) -> dict[str, int]:
    def get(*names: str, default: int | None = None) -> int:
        for n in names:
            v = getattr(config, n, None)
            if isinstance(v, int) and v > 0:
                return v
        if default is None:
            raise SagelaunchError(f"the built model's config has none of {', '.join(names)}", field=f"config.{names[0]}",
                                  value=None, allowed="a Hugging Face config with it",
                                  fix="pass explicit dimensions instead (planner.model_from_dims)")
        return default

    hidden = get("hidden_size", "n_embd")
    heads = get("num_attention_heads", "n_head")
    return {"hidden": hidden, "heads": heads, "kv_heads": get("num_key_value_heads", default=heads),
            "ffn": get("intermediate_size", "n_inner", default=4 * hidden), "vocab": get("vocab_size")}
