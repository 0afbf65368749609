"""Rank layout: which pipeline / tensor / reduced-data-parallel coordinate each global rank gets.

The placement rule is jobspec.smp's (SMP v1: a permutation of D, P, T; "cluster" = "DPT", "spread" = "TPD";
the right-most letter varies fastest over consecutive global ranks). That is exactly a row-major DeviceMesh whose dims are
named in the string's order, so the layout is computed from a `DeviceMesh` built without processes
(`_init_backend=False`) and the live run builds the same mesh with process groups.

Group ranks (dp_rank, mp_rank, ...) are positions in the group's ascending global ranks, which is the
mesh-order flattening of the group's dims.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sagelaunch.jobspec import smp as rules
from sagelaunch.jobspec.smp import GROUP_DIMS, mesh_shape
from sagelaunch.modelparallel.errors import SMPValidationError

if TYPE_CHECKING:
    from torch.distributed.device_mesh import DeviceMesh


def placement_order(strategy: str) -> str:
    """sagelaunch.jobspec.smp.placement_order, raising SMPValidationError."""
    try:
        return rules.placement_order(strategy)
    except ValueError as err:
        raise SMPValidationError(str(err)) from None


def build_mesh(device_type: str, world: int, pp: int, tp: int, strategy: str, rank: int | None = None) -> DeviceMesh:
    """The DeviceMesh (dims named in placement order). With `rank` given, no process groups are created."""
    import torch
    from torch.distributed.device_mesh import DeviceMesh

    try:
        rules.check_grid(world, pp, tp)
    except ValueError as err:
        raise SMPValidationError(str(err)) from None
    order = placement_order(strategy)
    mesh = torch.arange(world).reshape(mesh_shape(order, world // (pp * tp), pp, tp))
    if rank is None:
        return DeviceMesh(device_type, mesh, mesh_dim_names=tuple(order))
    return DeviceMesh(device_type, mesh, mesh_dim_names=tuple(order), _init_backend=False, _rank=rank)


@dataclass(frozen=True)
class RankLayout:
    rank: int
    coords: dict[str, int]  # D/P/T coordinate
    groups: dict[str, tuple[int, ...]] = field(default_factory=dict)  # "pp"/"tp"/"rdp"/"dp"/"mp"/"world" → ranks

    def group_rank(self, group: str) -> int:
        return self.groups[group].index(self.rank)

    @property
    def pp_rank(self) -> int:
        return self.coords["P"]

    @property
    def tp_rank(self) -> int:
        return self.coords["T"]

    @property
    def rdp_rank(self) -> int:
        return self.coords["D"]

    @property
    def dp_rank(self) -> int:
        return self.group_rank("dp")

    @property
    def mp_rank(self) -> int:
        return self.group_rank("mp")

    def as_dict(self) -> dict[str, int]:
        return {"rank": self.rank, "pp_rank": self.pp_rank, "tp_rank": self.tp_rank, "rdp_rank": self.rdp_rank,
                "dp_rank": self.dp_rank, "mp_rank": self.mp_rank}


def layout_from_mesh(mesh: DeviceMesh) -> RankLayout:
    """This mesh's rank: coordinates from `DeviceMesh.get_coordinate`, groups from the mesh tensor."""
    names = mesh.mesh_dim_names
    coord = mesh.get_coordinate()
    rank = int(mesh.mesh[tuple(coord)])
    groups = {}
    for group, dims in GROUP_DIMS.items():
        index = tuple(slice(None) if name in dims else coord[i] for i, name in enumerate(names))
        groups[group] = tuple(int(r) for r in mesh.mesh[index].flatten().tolist())
    return RankLayout(rank, {name: int(c) for name, c in zip(names, coord)}, groups)


def rank_layouts(world: int, pp: int, tp: int, strategy: str) -> list[RankLayout]:
    """Every rank's layout, computed without processes (one process-less DeviceMesh per rank)."""
    return [layout_from_mesh(build_mesh("cpu", world, pp, tp, strategy, rank=r)) for r in range(world)]
