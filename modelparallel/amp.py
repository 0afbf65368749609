"""smp.amp.GradScaler: torch's GradScaler whose skip decision is the whole model's. With tensor or pipeline
parallelism each rank sees only its shard's gradients; an inf in one shard must make every rank skip the step
(and back off the scale) together, so the per-rank found-inf flags are max-reduced over the world."""

from __future__ import annotations

import torch
import torch.distributed as dist

from sagelaunch.modelparallel.core import state


class GradScaler(torch.amp.GradScaler):
    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True):
        device = state.device.type if state.initialized else ("cuda" if torch.cuda.is_available() else "cpu")
        super().__init__(device, init_scale=init_scale, growth_factor=growth_factor, backoff_factor=backoff_factor,
                         growth_interval=growth_interval, enabled=enabled)

    def unscale_(self, optimizer) -> None:
        super().unscale_(optimizer)
        if dist.is_initialized() and dist.get_world_size() > 1:
            for found_inf in self._per_optimizer_states[id(optimizer)]["found_inf_per_device"].values():
                dist.all_reduce(found_inf, op=dist.ReduceOp.MAX)

