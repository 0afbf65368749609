"""delayed_parameter_initialization: the model is built on the meta device (no memory), and smp.DistributedModel
materialises it module by module, sharding each tensor-parallel layer as soon as it is initialised, so a rank
never holds more than one full layer besides its shards.

Initialisation runs in Hugging Face's order (children before parents, `PreTrainedModel._initialize_weights` of
the nearest Hugging Face model above each module, else the module's `reset_parameters()`), once per tensor
(tied parameters are initialised by their first owner), so every rank and every parallel degree draws the same
random numbers: the materialised model equals the same script's at degree 1.
"""

from __future__ import annotations

import contextlib
from typing import Callable

import torch
import torch.nn as nn

from sagelaunch.modelparallel.errors import SMPValidationError


@contextlib.contextmanager
def delay_param_initialization(enabled: bool = True):
    """SMP's smp.delay_param_initialization: modules created inside get meta tensors, materialised later by
    smp.DistributedModel (only each rank's shard of tensor-parallel layers)."""
    if not enabled:
        yield
        return
    with torch.device("meta"):
        yield


@contextlib.contextmanager
def same_random_numbers(group, device):
    """Every rank of `group` draws its group's first rank's random numbers inside, then gets its own generator
    back. Scripts reseed per tensor-parallel rank after creating the model (the GPT-2 example sets seed + tp_rank
    for dropout), and a delayed model is initialised after that: without this, each rank's shard would come from
    a differently initialised layer, and the model would not be the one one process initialises."""
    import torch.distributed as dist

    src = dist.get_global_rank(group, 0)
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        states = [torch.get_rng_state(), torch.cuda.get_rng_state(device) if device.type == "cuda" else None]
        dist.broadcast_object_list(states, src=src, group=group)
        torch.set_rng_state(states[0])
        if states[1] is not None:
            torch.cuda.set_rng_state(states[1], device)
        yield


def is_delayed(module: nn.Module) -> bool:
    return any(t.is_meta for t in (*module.parameters(), *module.buffers()))


def check_delayed(module: nn.Module, delayed_parameter_initialization: bool) -> None:
    """delayed_parameter_initialization=True needs a model built inside smp.delay_param_initialization()."""
    if delayed_parameter_initialization and not is_delayed(module):
        raise SMPValidationError(
            "mp_parameters.delayed_parameter_initialization=True, but the model given to smp.DistributedModel is "
            "already materialised; create it inside `with smp.delay_param_initialization():` or drop the parameter")


def _materialize_own(module: nn.Module, device, memo: dict[int, tuple]) -> bool:
    """Real (uninitialised) tensors for the module's own meta parameters and buffers; True if any is new."""
    fresh = False
    for name, p in list(module._parameters.items()):
        if p is None or not p.is_meta:
            continue
        if id(p) not in memo:  # a tied parameter keeps one tensor, initialised by its first owner
            memo[id(p)] = (p, nn.Parameter(torch.empty_like(p, device=device), requires_grad=p.requires_grad))
            fresh = True
        module._parameters[name] = memo[id(p)][1]
    for name, b in list(module._buffers.items()):
        if b is not None and b.is_meta:
            module._buffers[name] = torch.empty_like(b, device=device)
            fresh = True
    return fresh


def materialize(module: nn.Module, device, on_ready: Callable[[str, nn.Module], None] = lambda name, m: None):
    """Materialise and initialise `module` in place; `on_ready(name, m)` runs once m's subtree is initialised."""
    from transformers import PreTrainedModel  # noqa: F401  (only reached for models built under the context)

    memo: dict[int, tuple] = {}

    def visit(name: str, m: nn.Module, hf_init) -> None:
        if isinstance(m, PreTrainedModel):
            hf_init = m._initialize_weights
        for child_name, child in m.named_children():
            visit(f"{name}.{child_name}" if name else child_name, child, hf_init)
        fresh = _materialize_own(m, device, memo)
        if hf_init is not None:
            hf_init(m)  # also for parameter-free modules: GPT-2 rescales its children's c_proj here
        elif fresh:
            if not hasattr(m, "reset_parameters"):
                raise SMPValidationError(
                    f"delayed parameter initialization: {name or 'the model'} ({type(m).__name__}) has parameters "
                    "but no reset_parameters() to initialise them; give it one, or build the model without "
                    "smp.delay_param_initialization()")
            m.reset_parameters()
        on_ready(name, m)

    with torch.no_grad():
        visit("", module, None)


def shard_points(styles: dict[str, object], module: nn.Module) -> dict[str, dict[str, object]]:
    """Group plan entries by the layer that holds them (a child of an nn.ModuleList), relative to it: a layer
    is sharded once initialised, since a parent's initialisation may still write its children's tensors."""
    modules = dict(module.named_modules())
    layers = {f"{n}.{c}" if n else c for n, m in modules.items() if isinstance(m, nn.ModuleList)
              for c, _ in m.named_children()}
    groups: dict[str, dict[str, object]] = {}
    for path, style in styles.items():
        parts = path.split(".")
        point = next((".".join(parts[:i]) for i in range(len(parts), 0, -1) if ".".join(parts[:i]) in layers), path)
        relative = path[len(point) + 1:] if path != point else ""
        groups.setdefault(point, {})[relative] = style
    return groups
