"""scripts/fault_injection.py with a small N (issue 32): every fault once (kills of the supervisor, the rank and the
caller; a full and a read-only output; same-name submissions from one and from two registries; same-name deploys),
then the promises: user files byte-identical, no output replaced, every job listed in a final status, nothing runs.
The full run (100 jobs) is recorded in README's Reliability section."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "fault_injection.py"


@pytest.mark.slow
def test_fault_injection_keeps_every_promise(tmp_path, capsys, monkeypatch):
    spec = importlib.util.spec_from_file_location("fault_injection", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setenv("SAGELAUNCH_HOME", os.environ.get("SAGELAUNCH_HOME", ""))  # restored after the run
    code = module.main(["--jobs", str(len(module.FAULTS)), "--concurrency", "3", "--workdir", str(tmp_path / "run")])
    out = capsys.readouterr().out
    assert code == 0 and "every promise kept" in out, out
    assert f"{len(module.FAULTS) - 1} jobs" in out  # the deploy scenario starts no job
