"""SMP's object communication API (broadcast / send / recv_from / allgather / barriers) on torch.distributed."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any

from sagelaunch.modelparallel.core import _require_init
from sagelaunch.modelparallel.errors import SMPValidationError

if TYPE_CHECKING:
    import torch
    from torch.distributed import ProcessGroup


class CommGroup(Enum):
    WORLD = "world"
    MP_GROUP = "mp"
    DP_GROUP = "dp"
    PP_GROUP = "pp"
    TP_GROUP = "tp"
    RDP_GROUP = "rdp"


class RankType(Enum):
    WORLD_RANK = "world"
    MP_RANK = "mp"
    DP_RANK = "dp"
    PP_RANK = "pp"
    TP_RANK = "tp"
    RDP_RANK = "rdp"


WORLD, MP_GROUP, DP_GROUP = CommGroup.WORLD, CommGroup.MP_GROUP, CommGroup.DP_GROUP
PP_GROUP, TP_GROUP, RDP_GROUP = CommGroup.PP_GROUP, CommGroup.TP_GROUP, CommGroup.RDP_GROUP


def _members(kind: CommGroup | RankType) -> tuple[int, ...]:
    if not isinstance(kind, (CommGroup, RankType)):
        raise SMPValidationError(f"expected an smp.CommGroup or smp.RankType, got {kind!r}")
    return _require_init().layout.groups[kind.value]


def _pg(group: CommGroup) -> ProcessGroup:
    return _require_init().groups[group.value]


def _global(src_or_dest: int, rank_type: RankType) -> int:
    members = _members(rank_type)
    if not 0 <= src_or_dest < len(members):
        raise SMPValidationError(
            f"rank {src_or_dest} is out of range for {rank_type.name} (group of {len(members)}: 0..{len(members) - 1})"
        )
    return members[src_or_dest]


def _device() -> torch.device:
    return _require_init().device


def broadcast(obj: Any, group: CommGroup = CommGroup.WORLD) -> None:
    """Send `obj` to every other rank of `group`; each of them calls `recv_from(this rank, ...)`."""
    import torch.distributed as dist

    me = dist.get_rank()
    for dest in _members(group):
        if dest != me:
            dist.send_object_list([obj], dst=dest, device=_device())


def send(obj: Any, dest_rank: int, rank_type: RankType = RankType.WORLD_RANK) -> None:
    import torch.distributed as dist

    dist.send_object_list([obj], dst=_global(dest_rank, rank_type), device=_device())


def recv_from(src_rank: int, rank_type: RankType = RankType.WORLD_RANK) -> Any:
    import torch.distributed as dist

    box = [None]
    dist.recv_object_list(box, src=_global(src_rank, rank_type), device=_device())
    return box[0]


def allgather(obj: Any, group: CommGroup = CommGroup.WORLD) -> list[Any]:
    import torch.distributed as dist

    out: list[Any] = [None] * len(_members(group))
    dist.all_gather_object(out, obj, group=_pg(group))
    return out


def barrier(group: CommGroup = CommGroup.WORLD) -> None:
    import torch.distributed as dist

    dist.barrier(group=_pg(group))


def dp_barrier() -> None:
    barrier(CommGroup.DP_GROUP)


def mp_barrier() -> None:
    barrier(CommGroup.MP_GROUP)


def agree_on_error(message: str | None, group: CommGroup = CommGroup.WORLD) -> None:
    """Collective: if any rank of `group` has an error message, every rank raises the first one.

    Costs one small all_reduce when all is well; keeps ranks from hanging when only some of them fail.
    """
    import torch
    import torch.distributed as dist

    if len(_members(group)) == 1:
        if message:
            raise SMPValidationError(message)
        return
    flag = torch.tensor([1 if message else 0], device=_device())
    dist.all_reduce(flag, group=_pg(group))
    if int(flag.item()) == 0:
        return
    messages = allgather(message, group)
    raise SMPValidationError(next(m for m in messages if m))  # the same message on every rank
