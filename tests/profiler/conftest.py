"""Shared helpers of the profiler tests: the reference traces (tests/data/traces) and HTA's numbers for them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.conftest import RUN_ENV

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "data" / "traces"
# a command run as from a bare shell: nothing of the test process's environment but the run's own folders
BARE_ENV = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", **RUN_ENV}
HTA_REFERENCE = REPO / "tests" / "data" / "profiler" / "hta_reference.json"


@pytest.fixture(scope="session")
def traces_dir() -> Path:
    assert TRACES.is_dir(), f"reference traces expected at {TRACES}"
    return TRACES


@pytest.fixture(scope="session")
def hta_reference_doc() -> dict:
    return json.loads(HTA_REFERENCE.read_text())


@pytest.fixture(scope="session")
def hta_reference(hta_reference_doc) -> dict:
    return hta_reference_doc["traces"]


def analysis_json(path_or_profile, **kwargs) -> dict:
    """The analysis as the JSON document `profile analyze --json` prints (the typed records' builtins)."""
    import msgspec

    from sagelaunch.profiler.analysis import analyze

    return msgspec.to_builtins(analyze(path_or_profile, **kwargs))


@pytest.fixture(scope="session")
def analyses(traces_dir) -> dict:
    """The JSON document of our analysis of every reference trace, computed once for the session."""
    return {p.name: analysis_json(p) for p in sorted(traces_dir.glob("*.json.gz"))}


def script_env(extra: dict | None = None) -> dict:
    """The environment of a training script run outside any job: no profilerconfig.json, the output process on."""
    import os

    from sagelaunch.profiler.output_process import PROCESS_ENV

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for name in ("SAGELAUNCH_PROFILER_CONFIG", PROCESS_ENV):
        env.pop(name, None)
    return {**env, **(extra or {})}


def run_profiled_script(code: str, *args, env: dict | None = None, timeout: int = 120):
    """Run ``python -c code *args`` in script_env(env), fail on a non-zero exit, and return (the finished process,
    the JSON its last stdout line holds)."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True,
                          env=script_env(env), timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, json.loads(proc.stdout.strip().splitlines()[-1])
