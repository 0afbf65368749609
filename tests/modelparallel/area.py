"""One torchrun launch per world size (1, 2, 4) for the whole area: every test module registers its groups of cases
(with the worker module that runs them) here, and the session's `_launches` fixture (conftest.py) starts one launch
of area_worker.py per world size holding the groups of the selected tests only, in the order the tests run. Torch,
transformers and the process group then start once per world size instead of once per module and size, and a test
waits only for the groups before its own."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import pytest

from tests.modelparallel.launch import Launch

LAUNCH_TIMEOUT = 1800  # seconds, for all the area's groups at one world size on a loaded machine


@dataclass(frozen=True)
class Group:
    key: str
    worker: str  # a module of tests/modelparallel whose rank_results(cases, out_dir) runs the cases
    worlds: dict[int, list[dict]]  # world size → cases
    used_by: Callable[[pytest.Item], bool]


GROUPS: dict[str, Group] = {}


def register(owner: str, worker: str, worlds: dict[int, list[dict]],
             used_by: Callable[[pytest.Item], bool] | None = None) -> str:
    """Add `owner`'s cases (by default the tests of the module named `owner` use them); returns the group's key."""
    key = owner.rsplit(".", 1)[-1]
    GROUPS[key] = Group(key, worker, worlds, used_by or (lambda item: getattr(getattr(item, "module", None), "__name__", None) == owner))
    return key


class Area:
    def __init__(self, launches: dict[int, Launch]):
        self.launches = launches
        self.results: dict[tuple[str, int], list[dict]] = {}

    def ranks(self, key: str, world: int) -> list[dict]:
        """Each rank's results of group `key` at `world` ranks."""
        if (key, world) not in self.results:
            self.results[key, world] = self.launches[world].ranks(key)
        return self.results[key, world]


@contextlib.contextmanager
def launched(items: list[pytest.Item], root: Path) -> Iterator[Area]:
    """Start the launches `items` need (their groups, in the order of the first item using each); stop them at the
    end."""
    order: list[Group] = []
    for item in items:
        order += [g for g in GROUPS.values() if g not in order and g.used_by(item)]
    worlds = sorted({world for group in order for world in group.worlds})
    launches = {world: Launch([{"key": g.key, "worker": g.worker, "cases": g.worlds[world]}
                               for g in order if world in g.worlds], world, root / f"world{world}", LAUNCH_TIMEOUT)
                for world in worlds}
    try:
        yield Area(launches)
    finally:
        for launch in launches.values():
            launch.stop()
