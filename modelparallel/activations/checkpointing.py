"""smp.set_activation_checkpointing on torch's non-reentrant activation checkpointing.

"each": every child of an nn.Sequential / nn.ModuleList (or the module itself) gets the composable
`torch.distributed._composable.checkpoint`, which keeps parameter names unchanged (checkpoint_wrapper would
add a `_checkpoint_wrapped_module.` prefix and break state dicts). "group_N" / "contiguous" on an nn.Sequential
checkpoint runs of N children (or all children) as one region with torch.utils.checkpoint.
Activation offloading (offload_activations, activation_loading_horizon) is offload.py's ActivationOffloader; it
offloads what a checkpointed module keeps, its inputs (see offload.py).
"""

from __future__ import annotations

import re
import types
from typing import TYPE_CHECKING, Any, Callable

from sagelaunch.modelparallel.activations.offload import checkpoint_region
from sagelaunch.modelparallel.errors import SMPValidationError

if TYPE_CHECKING:
    import torch.nn as nn

STRATEGIES = "'each', 'contiguous' or 'group_N' (N ≥ 1)"


def _composable_checkpoint(module: nn.Module) -> None:
    from torch.distributed._composable import checkpoint

    if not getattr(module, "_smp_checkpointed", False):
        checkpoint(module)
        module._smp_checkpointed = True


def _grouped_forward(seq: nn.Sequential, group: int | None) -> Callable[[Any], Any]:
    """A Sequential forward that checkpoints runs of `group` children (all children when None)."""
    from torch.utils.checkpoint import checkpoint

    def forward(self: nn.Sequential, x: Any) -> Any:
        children = list(self._modules.values())
        size = group or len(children)
        for start in range(0, len(children), size):
            chunk = children[start:start + size]

            def run(inp: Any, chunk: list[nn.Module] = chunk) -> Any:
                for m in chunk:
                    inp = m(inp)
                return inp

            with checkpoint_region():  # offload_activations: the region's saved input is one scheduled group
                x = checkpoint(run, x, use_reentrant=False)
        return x

    return types.MethodType(forward, seq)


def set_activation_checkpointing(module: nn.Module, preserve_rng_state: bool = True, pack_args_as_tuple: bool = False,
                                 strategy: str = "each") -> None:
    import torch.nn as nn

    match = re.fullmatch(r"group_(\d+)", strategy or "")
    if strategy not in ("each", "contiguous") and not (match and int(match.group(1)) >= 1):
        raise SMPValidationError(f"set_activation_checkpointing: strategy={strategy!r} is not valid; allowed: {STRATEGIES}")
    if not isinstance(module, nn.Module):
        raise SMPValidationError(f"set_activation_checkpointing: expected an nn.Module, got {type(module).__name__}")
    if isinstance(module, (nn.Sequential, nn.ModuleList)):
        if strategy == "each" or isinstance(module, nn.ModuleList):
            for child in module.children():
                _composable_checkpoint(child)
        else:
            module.forward = _grouped_forward(module, int(match.group(1)) if match else None)
            module._smp_checkpoint_regions = True
    else:
        _composable_checkpoint(module)
