"""parallelize's activation step: offload_activations keeps what backward needs in CPU memory and brings it back
at most activation_loading_horizon modules ahead (offload.py). Activation checkpointing itself is set per module
by smp.set_activation_checkpointing (checkpointing.py), before or after wrapping."""

from __future__ import annotations

import atexit
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagelaunch.modelparallel.activations.offload import ActivationOffloader

if TYPE_CHECKING:
    from sagelaunch.jobspec.smp import SMPParameters
    from sagelaunch.modelparallel.core.state import SMPState


@dataclass(frozen=True)
class ActivationOptions:
    offload: bool  # offload_activations
    loading_horizon: int  # activation_loading_horizon

    @classmethod
    def from_config(cls, cfg: SMPParameters) -> ActivationOptions:
        return cls(cfg.offload_activations, cfg.activation_loading_horizon)


def apply_activation_offload(options: ActivationOptions, run: SMPState) -> ActivationOffloader | None:
    """The offloader (the model's forward runs in its context), reporting what it moved when the process exits."""
    if not options.offload:
        return None

    offloader = ActivationOffloader(run.device, options.loading_horizon)
    atexit.register(report_offload, offloader, run.layout.rank)
    return offloader


def report_offload(offloader: ActivationOffloader, rank: int) -> None:
    """One line per rank in the job log at exit: what activation offloading moved, from its counters."""
    stats = offloader.stats
    print(f"[smp rank {rank}] offload_activations: {stats['packed']} saved tensors "
          f"({stats['packed_bytes']} bytes) offloaded in {stats['groups']} module runs; "
          f"{stats['prefetched']} prefetched within activation_loading_horizon, "
          f"{stats['fetched_on_demand']} fetched on demand", flush=True)
