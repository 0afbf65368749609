"""plan.json: what a local job's supervisor and watchdog run, as a typed, versioned record.

The submitting process writes it (launcher.local.plan); the supervisor, a separate process that may be started by
another sagelaunch release, loads it. A plan of another version or shape is refused by name, never half-read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from sagelaunch.jobspec.errors import SagelaunchError

PLAN_VERSION = 1
PLAN_FILE = "plan.json"


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HostPlan(_Record):
    """One host: its /opt/ml root, the command, its environment and how its log lines name ranks."""

    host: str
    root: Path
    cwd: Path
    command: list[str]
    env: dict[str, str]
    # one process per host (TensorFlow, PyTorch without distribution): the host's index; None: torchrun names ranks
    rank: int | None
    rank_base: int
    monitor: list[str] | None  # the profiler's system monitor, when the job has a profiler


class JobPlan(_Record):
    version: Literal[1] = 1  # PLAN_VERSION: raise both together when the shape changes
    job_name: str
    job_dir: Path
    framework: Literal["pytorch", "tensorflow"]
    python: str
    hosts: list[HostPlan]
    max_run: int
    stop_grace: float
    region: str
    artifact_prefix: str
    checkpoint_s3_uri: str | None
    notes: list[str]  # written to the job log when it starts
    checkpoints_restored_at: float  # what the job writes after this moment goes back to checkpoint_s3_uri
    # local channels shown read-only without a copy: (source, target) binds the supervisor mounts privately
    read_only_binds: list[tuple[Path, Path]] = []

    def host(self, name: str) -> HostPlan:
        return next(h for h in self.hosts if h.host == name)


def load_plan(job_dir: Path) -> JobPlan:
    """The plan of the job in `job_dir`; a clear error for a plan this release cannot run."""
    path = job_dir / PLAN_FILE
    text = path.read_text()
    try:
        return JobPlan.model_validate_json(text)
    except ValidationError as error:
        try:
            found = json.loads(text).get("version")
        except (ValueError, AttributeError):
            found = None
        if found != PLAN_VERSION:
            raise SagelaunchError(f"{path}: plan version {found!r} cannot be run by this sagelaunch, which reads plan "
                                  f"version {PLAN_VERSION}; the job was laid out by another release — submit it again "
                                  "with this one", field="version", value=found, allowed=str(PLAN_VERSION),
                                  fix="submit the job again with this release") from error
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
        raise SagelaunchError(f"{path}: not a plan this sagelaunch can run ({problems}); submit the job again",
                              field="plan", value=str(path), allowed="a plan this release wrote",
                              fix="submit the job again") from error
