"""The local job registry: DescribeTrainingJob-shaped records, safe under concurrent writers."""

from __future__ import annotations

import multiprocessing
from datetime import datetime

import pytest

from sagelaunch.launcher.local import registry
from tests.local.conftest import unique


def _new(name: str) -> None:
    now = registry.now()
    registry.create({"TrainingJobName": name, "TrainingJobStatus": "InProgress", "SecondaryStatus": "Starting",
                     "SecondaryStatusTransitions": [{"Status": "Starting", "StartTime": now, "StatusMessage": "s"}],
                     "CreationTime": now, "JobDir": "/nowhere"})


def test_records_have_describe_shape_and_history():
    name = unique("reg")
    _new(name)
    registry.transition(name, "Training", "Training in progress", TrainingStartTime=registry.now())
    record = registry.transition(name, "Completed", "done", TrainingJobStatus="Completed", TrainingEndTime=registry.now())
    got = registry.get(name)
    assert got == record
    assert got["TrainingJobStatus"] == "Completed" and got["SecondaryStatus"] == "Completed"
    assert [t["Status"] for t in got["SecondaryStatusTransitions"]] == ["Starting", "Training", "Completed"]
    assert all(isinstance(t["StartTime"], datetime) and isinstance(t["EndTime"], datetime)
               for t in got["SecondaryStatusTransitions"])
    assert got["TrainingStartTime"] <= got["TrainingEndTime"]
    assert registry.exists(name) and name in [r["TrainingJobName"] for r in registry.list_jobs(status="Completed")]
    assert name not in [r["TrainingJobName"] for r in registry.list_jobs(status="InProgress")]


def test_duplicate_and_unknown_names_are_explained():
    name = unique("reg")
    _new(name)
    with pytest.raises(ValueError, match="already exists"):
        _new(name)
    with pytest.raises(KeyError, match="did you mean"):
        registry.get(name + "x")


def _hammer(args: tuple[str, str, int]) -> int:
    home, name, count = args
    import os

    os.environ["SAGELAUNCH_HOME"] = home
    for i in range(count):
        registry.transition(name, f"Step-{os.getpid()}-{i}", "concurrent writer")
    return count


def test_concurrent_writers_lose_no_update():
    """Two processes append transitions to the same record at once: every one of them is kept."""
    name = unique("reg")
    _new(name)
    home = str(registry.home())
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        written = sum(pool.map(_hammer, [(home, name, 60), (home, name, 60)]))
    history = registry.get(name)["SecondaryStatusTransitions"]
    assert written == 120 and len(history) == 1 + 120
