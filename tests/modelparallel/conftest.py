"""One torchrun launch per world size, shared by every test of the area (module fixtures would relaunch).
Both launches start together: their ranks spend much of the time waiting on each other's collectives."""

from __future__ import annotations

import pytest

from tests.modelparallel import cases
from tests.modelparallel.launch import start_cases


@pytest.fixture(scope="session")
def _launches(tmp_path_factory):
    launches = {2: start_cases(cases.WORLD2, 2, tmp_path_factory.mktemp("mp_world2")),
                4: start_cases(cases.WORLD4, 4, tmp_path_factory.mktemp("mp_world4"))}
    yield launches
    for wait in launches.values():
        wait.stop()


@pytest.fixture(scope="session")
def world2(_launches):
    return _launches[2]()


@pytest.fixture(scope="session")
def world4(_launches):
    return _launches[4]()
