"""parallelize's tensor-parallel step: the model on its device (materialised from the meta device when tensor
parallelism does not do it layer by layer), SMP's names exposed, and with tensor_parallel_degree > 1 the model
distributed over the tp sub-mesh with DTensor plans."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sagelaunch.modelparallel.tensor.delayed_init import is_delayed, materialize, same_random_numbers
from sagelaunch.modelparallel.tensor.smp_names import expose_smp_names
from sagelaunch.modelparallel.tensor.tensor_parallel import distribute_module

if TYPE_CHECKING:
    import torch.nn as nn

    from sagelaunch.jobspec.smp import SMPParameters
    from sagelaunch.modelparallel.core.state import SMPState


@dataclass(frozen=True)
class TensorParallelOptions:
    degree: int
    prescaled_batch: bool  # False: every tp rank brings its own batch, the model runs on their gathered batch
    delayed_parameter_initialization: bool

    @classmethod
    def from_config(cls, cfg: SMPParameters) -> TensorParallelOptions:
        return cls(cfg.tensor_parallel_degree, cfg.prescaled_batch, cfg.delayed_parameter_initialization)


@dataclass(frozen=True)
class TensorParallelResult:
    shard_dims: dict[str, int | None]  # parameter name → its shard dim, None for a replicated DTensor; {}: none
    scaled_batch: bool  # the model runs on the tp group's gathered batch (tensor/scaled_batch.py)


def place_on_device(module: nn.Module, options: TensorParallelOptions, run: SMPState) -> None:
    """Move the model to this rank's device; a model built on the meta device is materialised here, unless tensor
    parallelism materialises it layer by layer (apply_tensor_parallel)."""
    if is_delayed(module) and options.degree == 1:
        materialize(module, run.device)
    if not is_delayed(module):
        module.to(run.device)


def apply_tensor_parallel(module: nn.Module, options: TensorParallelOptions, run: SMPState) -> TensorParallelResult:
    expose_smp_names(module)  # at every degree: scripts walk SMP's tree (transformer.seq_layers) whatever tp is
    if options.degree == 1:
        return TensorParallelResult({}, scaled_batch=False)
    delayed = is_delayed(module)
    with same_random_numbers(run.groups["tp"], run.device) if delayed else contextlib.nullcontext():
        shard_dims = distribute_module(module, run.mesh["T"], options.degree, run.device)
    # with distributed modules, tp ranks share one (scaled) batch; otherwise tp ranks are plain replicas
    return TensorParallelResult(shard_dims, scaled_batch=bool(shard_dims) and not options.prescaled_batch)
