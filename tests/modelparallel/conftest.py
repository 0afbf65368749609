"""One torchrun launch per world size, shared by every test of the area (tests/modelparallel/area.py): the launches
start together when the first test needs one; their ranks spend much of the time waiting on each other's
collectives."""

from __future__ import annotations

import pytest

from tests.modelparallel import area, cases

MP = area.register("mp", "mp_worker", {2: cases.WORLD2, 4: cases.WORLD4},
                   used_by=lambda item: bool({"world2", "world4"} & set(item.fixturenames)))


@pytest.fixture(scope="session")
def _launches(request, tmp_path_factory):
    items = [item for item in request.session.items if "_launches" in item.fixturenames]
    with area.launched(items, tmp_path_factory.mktemp("mp_area")) as launches:
        yield launches


@pytest.fixture(scope="session")
def world2(_launches):
    return _launches.ranks(MP, 2)


@pytest.fixture(scope="session")
def world4(_launches):
    return _launches.ranks(MP, 4)
