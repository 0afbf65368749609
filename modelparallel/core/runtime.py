"""The rank/size/group API (SMP v1 names) over the state smp.init built (core/init.py); importing it loads
neither torch nor the parameter model, so `import smdistributed.modelparallel.torch as smp` stays cheap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sagelaunch.modelparallel.core.state import _require_init, state

if TYPE_CHECKING:
    from torch.distributed import ProcessGroup


def is_initialized() -> bool:
    return state.initialized


def rank() -> int:
    return _require_init().layout.rank


def size() -> int:
    return len(_require_init().layout.groups["world"])


def local_rank() -> int:
    return _require_init().local_rank


def local_size() -> int:
    return _require_init().local_size


def _group_rank(name: str) -> int:
    return _require_init().layout.group_rank(name)


def _group_size(name: str) -> int:
    return len(_require_init().layout.groups[name])


def pp_rank() -> int: return _group_rank("pp")
def pp_size() -> int: return _group_size("pp")
def tp_rank() -> int: return _group_rank("tp")
def tp_size() -> int: return _group_size("tp")
def dp_rank() -> int: return _group_rank("dp")
def dp_size() -> int: return _group_size("dp")
def mp_rank() -> int: return _group_rank("mp")
def mp_size() -> int: return _group_size("mp")
def rdp_rank() -> int: return _group_rank("rdp")
def rdp_size() -> int: return _group_size("rdp")


def get_world_process_group() -> ProcessGroup: return _require_init().groups["world"]
def get_pp_process_group() -> ProcessGroup: return _require_init().groups["pp"]
def get_tp_process_group() -> ProcessGroup: return _require_init().groups["tp"]
def get_dp_process_group() -> ProcessGroup: return _require_init().groups["dp"]
def get_mp_process_group() -> ProcessGroup: return _require_init().groups["mp"]
def get_rdp_process_group() -> ProcessGroup: return _require_init().groups["rdp"]


# SMP's rank-list getters: the global ranks in this rank's group (dp: same partition; mp: one model replica)
def get_world_group() -> list[int]: return list(_require_init().layout.groups["world"])
def get_pp_group() -> list[int]: return list(_require_init().layout.groups["pp"])
def get_tp_group() -> list[int]: return list(_require_init().layout.groups["tp"])
def get_dp_group() -> list[int]: return list(_require_init().layout.groups["dp"])
def get_mp_group() -> list[int]: return list(_require_init().layout.groups["mp"])
def get_rdp_group() -> list[int]: return list(_require_init().layout.groups["rdp"])


def num_microbatches() -> int:
    return _require_init().num_microbatches


def is_tracing() -> bool:
    return False


def shutdown() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()
    state.initialized = False
