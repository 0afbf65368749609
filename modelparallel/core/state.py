"""SMP's one run-time state (`smp.state`, `state_mod.state`), typed: what smp.init sets up (the validated
parameters, this rank's layout, the device mesh, the process groups, the device) and what the job makes later
(the model, the optimizer, the microbatch a step is running, a checkpoint waiting for its model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagelaunch.modelparallel.errors import SMPValidationError

if TYPE_CHECKING:
    import torch
    from torch.distributed import ProcessGroup
    from torch.distributed.device_mesh import DeviceMesh

    from sagelaunch.jobspec.smp import SMPParameters
    from sagelaunch.modelparallel.core.layout import RankLayout
    from sagelaunch.modelparallel.model import DistributedModel
    from sagelaunch.modelparallel.optimizer import DistributedOptimizer


@dataclass
class PendingCheckpoint:
    """smp.resume_from_checkpoint called before the model (or optimizer) it loads into exists or is partitioned:
    what is still to load, and from where."""

    target: str  # the checkpoint's file (full) or folder (partial)
    partial: bool
    strict: bool
    model: bool  # the model's part is still to load
    optimizer: bool  # the optimizer's part is still to load


class SMPState:
    """The attributes smp.init sets (`cfg`, `layout`, `mesh`, `device`) are typed as they are once it has run: read
    them through `_require_init()`, which refuses the call before it. Before, they hold None (as SMP's do)."""

    cfg: SMPParameters
    layout: RankLayout
    mesh: DeviceMesh  # dims in placement order
    device: torch.device

    def __init__(self) -> None:
        vars(self).update(cfg=None, layout=None, mesh=None, device=None)  # until smp.init (not in their types)
        self.initialized = False
        self.groups: dict[str, ProcessGroup] = {}  # "world"/"pp"/"tp"/"dp"/"mp"/"rdp" → its process group
        self.local_rank = 0
        self.local_size = 1
        self.model: DistributedModel | None = None
        self.optimizer: DistributedOptimizer | None = None
        self.microbatch: int | None = None  # the microbatch's index while a smp.step runs
        self.num_microbatches = 1
        self.pending_checkpoint: PendingCheckpoint | None = None


state = SMPState()


def _require_init() -> SMPState:
    if not state.initialized:
        raise SMPValidationError("smp.init() must be called before using the model parallel API")
    return state
