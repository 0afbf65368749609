"""smp.init: validate the SMP parameters, start torch.distributed and build one DeviceMesh in placement order.

Loaded when a script first calls smp.init (modelparallel/__init__.py), never by `import ... as smp`: it needs torch
and the parameter model (pydantic)."""

from __future__ import annotations

import atexit
import os
import sys
import warnings
from datetime import timedelta
from types import TracebackType
from typing import Callable

import torch
import torch.distributed as dist
from torch.distributed import ProcessGroup
from torch.distributed.device_mesh import DeviceMesh

from sagelaunch.jobspec.contract import SAGELAUNCH_SMP_INIT_DIR
from sagelaunch.jobspec.net import free_port
from sagelaunch.jobspec.smp import GROUP_DIMS, check_world
from sagelaunch.modelparallel.core.config import check_supported, load_parameters
from sagelaunch.modelparallel.core.cpu_only import tolerate_cuda_device_calls
from sagelaunch.modelparallel.core.layout import build_mesh, layout_from_mesh
from sagelaunch.modelparallel.core.state import state
from sagelaunch.modelparallel.errors import SMPRuntimeError, SMPValidationError

ExceptHook = Callable[[type[BaseException], BaseException, "TracebackType | None"], object]


class SMPIgnoredParameterWarning(UserWarning):
    """An mp_parameters key that is accepted but has no effect in this implementation."""


TIMEOUT_ENV = "SMP_TIMEOUT_SECONDS"


def _init_process_group() -> None:
    if dist.is_initialized():
        return
    if "RANK" not in os.environ:  # a plain `python train.py`: a world of one
        os.environ.update(RANK="0", WORLD_SIZE="1", LOCAL_RANK="0", LOCAL_WORLD_SIZE="1",
                          MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    timeout = timedelta(seconds=float(os.environ.get(TIMEOUT_ENV, "600")))
    if backend == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(backend, timeout=timeout)
    # SMP scripts never tear down; a rank leaving while a peer's gloo/NCCL work is still in flight
    # aborts the process ("terminate called without an active exception"), so we do it at exit.
    atexit.register(_shutdown_at_exit)
    sys.excepthook = _noting_uncaught_errors(sys.excepthook)


_failed: list[BaseException] = []  # the uncaught error this process is exiting with, if any


def _noting_uncaught_errors(hook: ExceptHook) -> ExceptHook:
    def excepthook(kind: type[BaseException], error: BaseException, traceback: TracebackType | None) -> None:
        _failed.append(error)
        hook(kind, error, traceback)

    return excepthook


def _shutdown_at_exit() -> None:
    if not dist.is_initialized():
        return
    if _failed:  # leaving on an error: its peers are waiting on this rank and will never meet it at a barrier
        dist.destroy_process_group()
        return
    try:
        if dist.get_backend() == "gloo":
            dist.monitored_barrier(timeout=timedelta(seconds=60))  # names a missing rank instead of hanging
        else:
            dist.barrier()
    except Exception:  # a peer already failed: its error is the one that matters
        pass
    dist.destroy_process_group()


def init(config: dict | None = None) -> None:
    """Validate the parameters (env SM_HP_MP_PARAMETERS + `config`), start torch.distributed, build the groups."""
    cfg = load_parameters(config)  # every rank sees the same parameters: errors here are the same everywhere
    ignored = check_supported(cfg)
    if not torch.cuda.is_available():
        tolerate_cuda_device_calls()
    _init_process_group()
    if ignored and dist.get_rank() == 0:  # one line, once, not once per rank
        warnings.warn("smp.init: mp_parameters without effect here: " + "; ".join(ignored),
                      SMPIgnoredParameterWarning, stacklevel=2)
    world = dist.get_world_size()
    pp, tp = cfg.pipeline_parallel_degree, cfg.tensor_parallel_degree  # check_world rejects degrees above the world
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else None
    try:
        check_world(cfg, world, gpus)
    except ValueError as err:
        raise SMPValidationError(str(err)) from None
    device_type = "cuda" if torch.cuda.is_available() else "cpu"
    mesh = build_mesh(device_type, world, pp, tp, cfg.placement_strategy)
    layout = layout_from_mesh(mesh)
    if layout.rank != dist.get_rank():
        raise SMPRuntimeError(f"mesh coordinate of rank {dist.get_rank()} resolved to {layout.rank}")
    state.cfg, state.mesh, state.layout = cfg, mesh, layout
    state.local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    state.local_size = int(os.environ.get("LOCAL_WORLD_SIZE", str(world)))
    state.device = torch.device("cuda", state.local_rank) if device_type == "cuda" else torch.device("cpu")
    state.groups = _build_groups(mesh)
    state.num_microbatches = cfg.microbatches
    state.model = state.optimizer = None
    state.initialized = True
    _leave_init_mark(dist.get_rank())


def _leave_init_mark(rank: int) -> None:
    """In a local job: tell the supervisor this rank runs SMP (a job whose ranks never call smp.init ran its
    model-parallel degrees as independent processes, which the supervisor refuses to call Completed)."""
    folder = os.environ.get(SAGELAUNCH_SMP_INIT_DIR)
    if folder:
        os.makedirs(folder, exist_ok=True)
        open(os.path.join(folder, f"rank{rank}"), "w").close()


def _build_groups(mesh: DeviceMesh) -> dict[str, ProcessGroup]:
    order = mesh.mesh_dim_names
    groups: dict[str, ProcessGroup] = {"world": dist.group.WORLD}
    for name, dims in GROUP_DIMS.items():
        if name == "world":
            continue
        in_order = tuple(d for d in order if d in dims)
        sub = mesh[in_order]
        groups[name] = sub.get_group() if len(in_order) == 1 else sub._flatten(f"smp_{name}").get_group()
    return groups
