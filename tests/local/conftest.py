"""Local-backend fixtures: a private SAGELAUNCH_HOME, spec factories, PID checks."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from sagelaunch.jobspec.spec import TrainingJobSpec, spec_from_fields
from sagelaunch.launcher.local.local_job import LocalJob, compile_local_job

SCRIPTS = Path(__file__).parent / "scripts"


@pytest.fixture(scope="module", autouse=True)
def sagelaunch_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Each module's local jobs register in a throwaway home (set process-wide, so supervisors inherit it,
    and restored after the module, so other areas' tests never see it)."""
    home = tmp_path_factory.mktemp("sagelaunch-home")
    saved = os.environ.get("SAGELAUNCH_HOME")
    os.environ["SAGELAUNCH_HOME"] = str(home)
    try:
        yield home
    finally:
        if saved is None:
            os.environ.pop("SAGELAUNCH_HOME", None)
        else:
            os.environ["SAGELAUNCH_HOME"] = saved


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def make_spec(entry_point: str = "contract_probe.py", **overrides) -> TrainingJobSpec:
    fields = dict(
        job_name=unique("local"), framework="pytorch", framework_version="2.13", py_version="py311",
        image_uri="local-test-image", region="us-west-2", entry_point=entry_point, source_dir=str(SCRIPTS),
        instance_type="local",
    )
    fields.update(overrides)
    return spec_from_fields(**fields)


def local_job(spec: TrainingJobSpec, job_dir: Path) -> LocalJob:
    """What the local backend lays `spec` out from: its compiled request and local facts (no code files)."""
    return compile_local_job(spec, job_dir, [])


def wait_for_files(folder: Path, count: int, timeout: float = 180) -> list[Path]:
    """Poll until `count` *.pid files exist (each rank writes one when it is up)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = sorted(folder.glob("*.pid"))
        if len(found) >= count and all(p.read_text() for p in found):
            return found
        time.sleep(0.05)
    raise AssertionError(f"only {len(list(folder.glob('*.pid')))} of {count} ranks started within {timeout}s")


def pids_in(folder: Path) -> list[int]:
    return [int(p.read_text()) for p in sorted(folder.glob("*.pid"))]


def survivors(pids: list[int]) -> list[int]:
    alive = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
        except psutil.NoSuchProcess:
            pass
    return alive


def job_tree(name: str) -> list[int]:
    """PIDs of a running job's supervisor and everything under it (torchrun agents, ranks)."""
    from sagelaunch.launcher.local import registry

    found = registry.supervisor(name)
    assert found is not None, f"job {name} has no supervisor recorded"
    try:
        root = psutil.Process(found[0])
        return [root.pid, *(child.pid for child in root.children(recursive=True))]
    except psutil.NoSuchProcess:
        return []
