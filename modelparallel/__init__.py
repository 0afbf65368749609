"""The smdistributed.modelparallel (SMP v1) PyTorch API on torch.distributed: `from sagelaunch import modelparallel as smp`.

Importing is cheap: torch is loaded when the API is first used.
"""

from __future__ import annotations

import importlib
from typing import Any

from sagelaunch.modelparallel.core.runtime import (  # noqa: F401  (no torch at import time)
    dp_rank, dp_size, get_dp_group, get_dp_process_group, get_mp_group, get_mp_process_group, get_pp_group,
    get_pp_process_group, get_rdp_group, get_rdp_process_group, get_tp_group, get_tp_process_group, get_world_group,
    get_world_process_group, is_initialized, is_tracing, local_rank, local_size, mp_rank, mp_size,
    num_microbatches, pp_rank, pp_size, rank, rdp_rank, rdp_size, shutdown, size, state, tp_rank, tp_size,
)
from sagelaunch.modelparallel.core.comm import (  # noqa: F401
    DP_GROUP, MP_GROUP, PP_GROUP, RDP_GROUP, TP_GROUP, WORLD, CommGroup, RankType, allgather, barrier, broadcast,
    dp_barrier, mp_barrier, recv_from, send,
)
from sagelaunch.modelparallel.errors import SMPRuntimeError, SMPValidationError  # noqa: F401
from sagelaunch.modelparallel.pipeline.step_output import StepOutput  # noqa: F401

# The SMP v1 API level this package implements (scripts and transformers compare it, e.g. ">= 1.10"); not the
# version of sagelaunch itself.
__version__ = "1.15.0"

_LAZY = {
    "init": "sagelaunch.modelparallel.core.init",  # torch and the parameter model: loaded by smp.init
    "step": "sagelaunch.modelparallel.pipeline.step_runner",
    "DistributedModel": "sagelaunch.modelparallel.model",
    "DistributedOptimizer": "sagelaunch.modelparallel.script_fp16_optimizer",  # the class and its fp16 variant
    "tensor_parallelism": "sagelaunch.modelparallel.tensor.tensor_parallel",
    "set_tensor_parallelism": "sagelaunch.modelparallel.tensor.tensor_parallel",
    "partition": "sagelaunch.modelparallel.pipeline.partitioning",
    "set_activation_checkpointing": "sagelaunch.modelparallel.activations.checkpointing",
    "save": "sagelaunch.modelparallel.checkpointing",
    "load": "sagelaunch.modelparallel.checkpointing",
    "save_checkpoint": "sagelaunch.modelparallel.checkpointing",
    "resume_from_checkpoint": "sagelaunch.modelparallel.checkpointing",
    "model_creation": "sagelaunch.modelparallel.model_setup",
    "delay_param_initialization": "sagelaunch.modelparallel.model_setup",
    "set_partition": "sagelaunch.modelparallel.model_setup",
}
# SMP's submodules, imported on first use (smp.nn.FusedLayerNorm, smp.amp.GradScaler, ...)
_SUBMODULES = ("nn", "amp", "utils", "optimizers", "model")


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"sagelaunch.modelparallel.{name}")
    raise AttributeError(f"module 'modelparallel' has no attribute {name!r}")


__all__ = sorted([n for n in globals() if not n.startswith("_") and n not in ("annotations", "importlib", "Any")]
                 + list(_LAZY) + list(_SUBMODULES))
