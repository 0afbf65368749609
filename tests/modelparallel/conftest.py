"""One torchrun launch per world size, shared by every test of the area (module fixtures would relaunch).
Both launches start together: their ranks spend much of the time waiting on each other's collectives."""

from __future__ import annotations

import pytest

from tests.modelparallel import cases
from tests.modelparallel.launch import launched_worlds


@pytest.fixture(scope="session")
def _launches(tmp_path_factory):
    with launched_worlds(tmp_path_factory, "mp_world", {2: cases.WORLD2, 4: cases.WORLD4}) as launches:
        yield launches


@pytest.fixture(scope="session")
def world2(_launches):
    return _launches[2]()


@pytest.fixture(scope="session")
def world4(_launches):
    return _launches[4]()
