"""Pipeline stages for any module tree with a layer stack (SMP v1's auto-partition by module tree): Hugging Face
causal LMs (GPT-2, Llama, GPT-NeoX, GPT-J, ...), encoders and arbitrary nested modules whose forward runs the
children of an nn.ModuleList in order.

The layer stack is the nn.ModuleList holding the most parameters; its children are the pipeline units. Every
stage runs the model's own forward, so nothing model-specific is rewritten:
- only this stage's layers are in the stack while it runs; the first of them gets the previous stage's hidden
  state in place of what the model computed, and a non-last stage ends the forward after its last layer;
- modules with parameters that run before the stack (embeddings) live on the first stage, those after it
  (final norm, heads) on the last; elsewhere embeddings become parameter-free zero stubs and LayerNorm/Dropout
  identities (their output is replaced at the first layer anyway);
- the model's tensor inputs (input_ids, attention_mask, labels, ...) travel with the hidden state, so every stage
  builds the same masks and positions; the last stage returns the model output's tensors (loss, logits);
- parameters tied across stages (GPT-2's wte / lm_head) are held by each stage that uses them, under the
  model's first name for them, and their gradients summed over the pipeline group after the schedule.
"""

from __future__ import annotations

import contextlib
import inspect
from typing import Any, Callable

import torch
import torch.distributed as dist
import torch.nn as nn

from sagelaunch.modelparallel.errors import SMPValidationError

SHAPE_KEEPING = (nn.LayerNorm, nn.Dropout, nn.Identity)


class _StageEnd(Exception):
    """Raised after a non-last stage's last layer: the rest of the model runs on later stages."""

    def __init__(self, hidden):
        super().__init__("pipeline stage end")
        self.hidden = hidden


class _ZeroEmbedding(nn.Module):
    """An embedding that lives on another stage: zeros of the right shape, no parameters."""

    def __init__(self, dim: int, dtype, tied_weight=None):
        super().__init__()
        self.dim, self.dtype = dim, dtype
        if tied_weight is not None:  # used by a module of this stage (a tied head): kept under its first name
            self.weight = tied_weight

    def forward(self, ids, *args, **kwargs):
        return torch.zeros(*ids.shape, self.dim, dtype=self.dtype, device=ids.device)


def find_layer_stack(module: nn.Module) -> tuple[str, nn.ModuleList] | None:
    stacks = [(name, m) for name, m in module.named_modules() if isinstance(m, nn.ModuleList) and len(m) > 1]
    if not stacks:
        return None
    return max(stacks, key=lambda item: sum(p.numel() for p in item[1].parameters()))


def _hidden_of(output):
    return output[0] if isinstance(output, (tuple, list)) else output


class _LayerStackStage(nn.Module):
    """One stage: the root's own forward restricted to `units` (see the module docstring)."""

    def __init__(self, builder: "LayerStackStages", units: list[tuple[str, nn.Module]], first: bool, last: bool,
                 owned: list[nn.Module]):
        super().__init__()
        self._builder = [builder]  # not registered: the root runs, the stage only owns its parameters
        self.units, self.first, self.last = units, first, last
        # the parameters this stage computes gradients for (the schedule scales them per microbatch)
        self.owned = nn.ModuleList(owned)

    @contextlib.contextmanager
    def _only_my_layers(self, hidden):
        stack = self._builder[0].stack
        saved = dict(stack._modules)
        stack._modules.clear()
        stack._modules.update(self.units)
        handles = []
        if not self.first:
            def swap_in(module, args, kwargs):
                if args:
                    return (hidden, *args[1:]), kwargs
                return args, {**kwargs, "hidden_states": hidden}

            # prepended: an activation-checkpointed layer records its inputs for the recomputation in a pre-hook
            handles.append(self.units[0][1].register_forward_pre_hook(swap_in, with_kwargs=True, prepend=True))
        if not self.last:
            def stop(module, args, output):
                raise _StageEnd(_hidden_of(output))

            handles.append(self.units[-1][1].register_forward_hook(stop))
        try:
            yield
        finally:
            for h in handles:
                h.remove()
            stack._modules.clear()
            stack._modules.update(saved)

    def forward(self, *inputs):
        builder = self._builder[0]
        hidden, tensors = (None, inputs) if self.first else (inputs[0], inputs[1:])
        kwargs = {**dict(zip(builder.input_names, tensors)), **builder.static_kwargs}
        try:
            with self._only_my_layers(hidden):
                out = builder.root(**kwargs)
        except _StageEnd as end:
            return (end.hidden, *tensors)
        return builder.output_tensors(out)


class RootCallStages:
    """What every stage builder that runs the root model's own forward on each stage shares: the model's tensor
    inputs by name (travelling with the activations), its fixed options, and its output rebuilt on the last stage."""

    def __init__(self, root: nn.Module):
        self.root = root
        self.input_names: tuple[str, ...] = ()
        self.static_kwargs: dict[str, Any] = {}
        self._output_type: Callable[..., Any] | None = None
        self._output_keys: tuple[str, ...] = ()

    def model_inputs(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Every tensor input by name, in one order, as positional stage inputs; the rest stays fixed."""
        bound = inspect.signature(self.root.forward).bind_partial(*args, **kwargs)
        named = dict(bound.arguments)
        extra = named.pop("kwargs", None) or {}
        named.update(extra)
        tensors = {k: v for k, v in named.items() if isinstance(v, torch.Tensor)}
        static = {k: v for k, v in named.items() if not isinstance(v, torch.Tensor) and v is not None}
        names = tuple(tensors)
        if self.input_names and (names != self.input_names or static != self.static_kwargs):
            raise SMPValidationError(
                f"a pipelined {type(self.root).__name__} must be called with the same arguments in every step "
                f"and microbatch; got tensors {names} and options {static}, before {self.input_names} and "
                f"{self.static_kwargs}")
        self.input_names, self.static_kwargs = names, static
        return tuple(tensors.values()), {}

    def output_tensors(self, out) -> tuple:
        if isinstance(out, torch.Tensor):
            self._output_type, self._output_keys = None, ()
            return (out,)
        if isinstance(out, dict):  # a Hugging Face ModelOutput
            keys = tuple(k for k, v in out.items() if isinstance(v, torch.Tensor))
            self._output_type, self._output_keys = type(out), keys
            return tuple(out[k] for k in keys)
        if isinstance(out, (tuple, list)) and out and all(isinstance(t, torch.Tensor) for t in out):
            self._output_type, self._output_keys = tuple, ()
            return tuple(out)
        raise SMPValidationError(f"a pipelined {type(self.root).__name__} must return a tensor, a tuple of tensors "
                                 "or a ModelOutput; "
                                 f"got {type(out).__name__}")

    def finalize(self, output):
        outputs = output if isinstance(output, tuple) else (output,)
        if self._output_type is None:
            return outputs[0]
        if self._output_type is tuple:
            return tuple(outputs)
        return self._output_type(**dict(zip(self._output_keys, outputs)))

    def find_tied(self) -> None:
        """Parameters reachable under several names (tied): each a list of all its names."""
        by_id: dict[int, list[str]] = {}
        for name, p in self.root.named_parameters(remove_duplicate=False):
            by_id.setdefault(id(p), []).append(name)
        self.tied = [names_ for names_ in by_id.values() if len(names_) > 1]
        params = dict(self.root.named_parameters(remove_duplicate=False))
        local = {n: getattr(p, "_local_tensor", p) for n, p in params.items()}  # a tp shard: its own rows
        self._tied_like = {tuple(n): torch.empty_like(local[n[0]], device="meta") for n in self.tied}
        self._device = next(self.root.parameters()).device
        self._tied_summed: dict[tuple[str, ...], torch.Tensor] = {}  # what each copy held when last summed

    def share_tied_values(self, group) -> None:
        """A tied parameter is one value: every stage holding a copy takes the first holder's (ranks may build the
        model from different seeds, as the BERT example seeds each rank by its local rank)."""
        own = dict(self.root.named_parameters(remove_duplicate=False))
        for names in self.tied:
            held = next((own[n] for n in names if n in own), None)
            holders: list[bool] = [False] * dist.get_world_size(group)
            dist.all_gather_object(holders, held is not None, group=group)
            like = self._tied_like[tuple(names)]
            buf = held.detach() if held is not None else torch.zeros(like.shape, dtype=like.dtype, device=self._device)
            dist.broadcast(getattr(buf, "_local_tensor", buf), src=dist.get_global_rank(group, holders.index(True)),
                           group=group)
            if held is not None and holders.index(True) != dist.get_rank(group):
                # a replica: Megatron's mark (its last stage's word_embeddings.weight.shared), which its
                # clip_grad_norm_fp32, copied by SMP's fp16 examples, reads to count a tied gradient once
                held.shared = True

    def keep_summed_tied_gradients(self) -> None:
        """A step starts from gradients that are all summed (or zero): keep what each tied copy holds, so that
        the next sum adds only what came after. Summing the whole gradient again would count the earlier steps'
        part once per copy — a loop that accumulates several @smp.step calls per optimizer.step() would train the
        tied weight with doubled gradients."""
        own = dict(self.root.named_parameters(remove_duplicate=False))
        self._tied_summed = {}
        for names in self.tied:
            held = next((own[n] for n in names if n in own), None)
            if held is not None and held.grad is not None:
                self._tied_summed[tuple(names)] = getattr(held.grad, "_local_tensor", held.grad).detach().clone()

    def sync_tied_gradients(self, group) -> None:
        """Sum the gradients of tied parameters over the stages that hold a copy (the others add zeros): the part
        added since the last sum (keep_summed_tied_gradients), which every copy already holds in full."""
        own = dict(self.root.named_parameters(remove_duplicate=False))
        for names in self.tied:
            held = next((own[n] for n in names if n in own), None)
            grad = held.grad if held is not None and held.grad is not None else None
            like = self._tied_like[tuple(names)]
            buf = grad if grad is not None else torch.zeros(like.shape, dtype=like.dtype, device=self._device)
            local = getattr(buf, "_local_tensor", buf)  # a vocab-parallel shard: its rows
            summed = self._tied_summed.get(tuple(names)) if grad is not None else None
            if summed is not None:
                local.sub_(summed)
            dist.all_reduce(local, group=group)
            if summed is not None:
                local.add_(summed)
            if held is not None and grad is None:
                held.grad = buf
        self._tied_summed = {}


class LayerStackStages(RootCallStages):
    """Stage builder (see partitioning.stage_builder) for a module tree with a layer stack."""

    def __init__(self, root: nn.Module, stack_name: str, stack: nn.ModuleList):
        super().__init__(root)
        self.stack_name, self.stack = stack_name, stack
        self.units = list(stack.named_children())
        names = [n for n, _ in root.named_modules()]
        start = names.index(stack_name)
        inside = {n for n in names if n == stack_name or n.startswith(stack_name + ".")}
        self.before = [n for n in names[:start] if n and n not in inside]
        self.after = [n for n in names[start:] if n not in inside]
        self.find_tied()

    def make_stage(self, unit_range: range, first: bool, last: bool):
        """Called before prune(): the modules around the stack are still the real ones."""
        units = [self.units[i] for i in unit_range]
        modules = dict(self.root.named_modules())
        around = (self.before if first else []) + (self.after if last else [])
        owned = [m for _, m in units] + [modules[n] for n in around
                                         if any(True for _ in modules[n].parameters(recurse=False))]
        return _LayerStackStage(self, units, first, last, owned)

    def prune(self, keep: set[int], first: bool, last: bool) -> None:
        for i, (name, _) in enumerate(self.units):
            if i not in keep:
                del self.stack._modules[name]
        modules = dict(self.root.named_modules())
        kept = {id(p) for n in (self.after if last else []) for p in modules[n].parameters()}
        if not first:
            self._replace(self.before, embedding_stub=True, kept=kept)
        if not last:
            self._replace(self.after, embedding_stub=False, kept=set())

    def _replace(self, names: list[str], embedding_stub: bool, kept: set[int]) -> None:
        modules = dict(self.root.named_modules())
        for name in names:
            m = modules.get(name)
            if m is None or not any(True for _ in m.parameters(recurse=False)):
                continue
            if embedding_stub and isinstance(m, nn.Embedding):
                stub = _ZeroEmbedding(m.embedding_dim, m.weight.dtype, m.weight if id(m.weight) in kept else None)
            elif not embedding_stub or isinstance(m, SHAPE_KEEPING):
                stub = nn.Identity()  # after the stack: never reached on this stage
            else:
                raise SMPValidationError(
                    f"pipeline_parallel_degree > 1: {name} ({type(m).__name__}) runs before the layer stack "
                    f"{self.stack_name} and has parameters; only embeddings, LayerNorm and Dropout may precede "
                    "the stack. Move it into the stack's first layer or set pipeline_parallel_degree=1")
            parent_name, _, attr = name.rpartition(".")
            setattr(modules[parent_name] if parent_name else self.root, attr, stub)
