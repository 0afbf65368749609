"""smp.amp.GradScaler: torch's GradScaler whose skip decision is the whole model's. With tensor or pipeline
parallelism each rank sees only its shard's gradients; an inf in one shard must make every rank skip the step
(and back off the scale) together, so the per-rank found-inf flags are max-reduced over the world."""

from __future__ import annotations

import torch
import torch.distributed as dist


class GradScaler(torch.amp.GradScaler):
    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        from sagelaunch.modelparallel.core import state

        device = state.device.type if state.initialized else ("cuda" if torch.cuda.is_available() else "cpu")
        super().__init__(device, init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)

    def unscale_(self, optimizer) -> None:
        super().unscale_(optimizer)
        if dist.is_initialized() and dist.get_world_size() > 1:
            for found_inf in self._per_optimizer_states[id(optimizer)]["found_inf_per_device"].values():
                dist.all_reduce(found_inf, op=dist.ReduceOp.MAX)


# ----- SMP's fp16/bf16 model (its Bit16_Module): half parameters, half inputs in, fp32 outputs out
def half_dtype(cfg) -> torch.dtype | None:
    """The parameters' dtype under mp_parameters fp16/bf16; None for fp32 training."""
    return torch.float16 if cfg.fp16 else torch.bfloat16 if cfg.bf16 else None


def _cast_floating(value, dtype: torch.dtype):
    from torch.utils._pytree import tree_map_only

    return tree_map_only(torch.Tensor, lambda t: t.to(dtype) if t.is_floating_point() and t.dtype != dtype else t,
                         value)


def to_half_inputs(args, kwargs, dtype: torch.dtype):
    """Floating inputs in the model's half dtype (token ids and masks of integer type are left alone)."""
    return _cast_floating(args, dtype), _cast_floating(kwargs, dtype)


def to_float_outputs(output):
    """The model's floating outputs in fp32, as SMP returns them (a loss computed from them is fp32)."""
    return _cast_floating(output, torch.float32)
