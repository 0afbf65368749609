"""shard_optimizer_state: the optimizer state sharded over the replica group with ZeroRedundancyOptimizer (ZeRO-1).

Why ZeroRedundancyOptimizer and not FSDP2: SMP's shard_optimizer_state shards only the optimizer state while
parameters and gradients stay replicated and reduced by DDP. ZeRO-1 is exactly that and composes with the DDP
wrappers the pipeline stages already use (no_sync / last-microbatch reduction); FSDP2 would also shard
parameters and gradients (SMP's separate sharded_data_parallel_degree feature, data/sharded.py) and replace DDP.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

import torch

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup


def shard_optimizer_state(optimizer: torch.optim.Optimizer, group: ProcessGroup) -> torch.optim.Optimizer:
    """A ZeroRedundancyOptimizer of `optimizer`'s class over `group`, each parameter group with its own options
    (weight decay, lr, ...); this rank holds its shard's state."""
    groups = [{**{k: v for k, v in g.items() if k != "params"}, "params": list(g["params"])}
              for g in optimizer.param_groups if g["params"]]
    return _zero_class()(groups, optimizer_class=type(optimizer), process_group=group,
                         **_constructor_defaults(optimizer))


def _constructor_defaults(optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """The optimizer's defaults its class's constructor takes again. Some defaults are not constructor arguments
    (AdamW's decoupled_weight_decay is fixed by the class); every group carries them anyway."""
    accepted = inspect.signature(type(optimizer).__init__).parameters
    return {k: v for k, v in optimizer.defaults.items() if k in accepted and k != "params"}


def _zero_class() -> type[torch.optim.Optimizer]:
    """ZeroRedundancyOptimizer that also takes tensor-parallel (DTensor) parameters: after each step it
    broadcasts every shard owner's updated parameters, and c10d.broadcast has no DTensor rule, so the
    broadcast goes to the DTensor's local tensor (the replica group's peers hold the same tp shard)."""
    import torch.distributed as dist
    from torch.distributed.optim import ZeroRedundancyOptimizer

    class _ZeroRedundancyOptimizer(ZeroRedundancyOptimizer):
        def _broadcast_params_from_rank(self, rank: int) -> list[Any]:
            if self.parameters_as_bucket_view:
                return super()._broadcast_params_from_rank(rank)
            src = dist.distributed_c10d.get_global_rank(self.process_group, rank)
            return [dist.broadcast(tensor=p.data.to_local() if hasattr(p.data, "to_local") else p.data, src=src,
                                   group=self.process_group, async_op=True)
                    for group in self._partition_parameters()[rank] for p in group["params"]]

    return _ZeroRedundancyOptimizer
