"""One torchrun launch per world size, shared by every test of the area (module fixtures would relaunch)."""

from __future__ import annotations

import pytest

from tests.modelparallel import cases
from tests.modelparallel.launch import run_cases


@pytest.fixture(scope="session")
def world2(tmp_path_factory):
    return run_cases(cases.WORLD2, 2, tmp_path_factory.mktemp("mp_world2"))


@pytest.fixture(scope="session")
def world4(tmp_path_factory):
    return run_cases(cases.WORLD4, 4, tmp_path_factory.mktemp("mp_world4"))
