"""Shared helpers of the profiler tests: the reference traces (tests/data/traces) and HTA's numbers for them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "data" / "traces"
HTA_REFERENCE = REPO / "tests" / "data" / "profiler" / "hta_reference.json"


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    assert TRACES.is_dir(), f"reference traces expected at {TRACES}"
    return TRACES


@pytest.fixture(scope="session")
def hta_reference() -> dict:
    return json.loads(HTA_REFERENCE.read_text())["traces"]


@pytest.fixture(scope="session")
def analyses(traces_dir) -> dict:
    """Our analysis of every reference trace, computed once for the session."""
    from profiler.analysis import analyze

    return {p.name: analyze(p) for p in sorted(traces_dir.glob("*.json.gz"))}
