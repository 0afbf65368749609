"""smp's `state_mod`: the module that holds SMP's one runtime state (`from smdistributed.modelparallel.torch.state_mod
import state`, as the GPT-2 example's fp16 utilities do). `state` is the same object as `smp.state`: `cfg` (the
validated parameters), `model` (the DistributedModel), `optimizer` (the DistributedOptimizer), `layout`, `groups`."""

from __future__ import annotations

from sagelaunch.modelparallel.core import state  # noqa: F401  (the name scripts import)
