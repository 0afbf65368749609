"""The one profile the browser has loaded: loading it in the background with progress, and unloading it.

One profile at a time (as SageMaker Profiler's UI): loading another while one is loaded is refused
until the user unloads the first (the trash icon). A load reads the job's files unit by unit (a rank's
Parquet files, a Kineto trace, the system counters) so progress advances with the bytes read; S3
profiles are first copied into a private temporary folder that unloading deletes.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
import threading
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchRuntimeError
from sagelaunch.jobspec.s3uri import key_destination
from sagelaunch.profiler.ui import sources

log = logging.getLogger(__name__)


class LoadConflict(SagelaunchRuntimeError):
    """A profile is loaded or loading; unload it first."""


class ProfileSession:
    def __init__(self, job_sources: sources.JobSources = sources.NO_SOURCES) -> None:
        self.sources = job_sources
        self._lock = threading.Lock()
        self.state = "empty"  # empty | loading | loaded | error
        self.job: dict[str, Any] | None = None
        self.progress = 0.0
        self.message = ""
        self.error = ""
        self.dashboard_json: bytes | None = None
        self.timeline_json: bytes | None = None
        self.summary: dict[str, Any] = {}
        self._tmp: str | None = None
        self._thread: threading.Thread | None = None
        self._generation = 0
        self.history: list[tuple[float, str]] = []  # (progress, message) of the current load, in order

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {"state": self.state, "job": self.job, "progress": round(self.progress, 4),
                    "message": self.message, "error": self.error, "summary": self.summary}

    def _set(self, generation: int, **fields: Any) -> bool:
        with self._lock:
            if generation != self._generation:
                return False  # unloaded meanwhile: drop the result
            for k, v in fields.items():
                setattr(self, k, v)
            if "progress" in fields or "message" in fields:
                self.history.append((self.progress, self.message))
            return True

    def start_load(self, job: sources.JobEntry) -> None:
        with self._lock:
            if self.state in ("loading", "loaded"):
                current = (self.job or {}).get("name")
                raise LoadConflict(f"profile of {current!r} is {self.state}; unload it (trash icon) before loading {job.name!r}")
            self._generation += 1
            gen = self._generation
            self.state, self.job, self.progress, self.error = "loading", job.to_dict(), 0.0, ""
            self.message = "starting"
            self.history = [(0.0, "starting")]
            self.dashboard_json = self.timeline_json = None
            self.summary = {}
        self._thread = threading.Thread(target=self._load, args=(job, gen), name=f"load-{job.name}", daemon=True)
        self._thread.start()

    def unload(self) -> None:
        with self._lock:
            self._generation += 1
            self.state, self.job, self.progress, self.message, self.error = "empty", None, 0.0, "", ""
            self.dashboard_json = self.timeline_json = None
            self.summary = {}
            tmp, self._tmp = self._tmp, None
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)

    def wait(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    # ---- the background load ----
    def _load(self, job: sources.JobEntry, gen: int) -> None:
        progress = partial(self._set, gen)
        try:
            build = _profile_build()
            if job.source == "path":
                profile = build.read_path(Path(job.location), progress)
            else:
                if job.source == "local":
                    roots: list[tuple[Path, str | None]] = [(d, d.parents[1].name)
                                                            for d in self.sources.local_dirs(job.name)]
                    if not roots:
                        raise LookupError(f"local job {job.name!r} has no profiler output under its job folder")
                    span = (0.0, 0.8)
                else:
                    roots = [(self._download(job, gen), None)]
                    span = (0.4, 0.8)
                profile = build.read_roots(roots, progress, span)
            dash_json, tl_json, summary = build.build(profile, job.name, progress)
            self._set(gen, dashboard_json=dash_json, timeline_json=tl_json, summary=summary, state="loaded",
                      progress=1.0, message="loaded")
        except Exception as exc:  # noqa: BLE001 - shown in the page; the server keeps running
            log.warning("loading %s failed: %s", job.name, exc)
            self._set(gen, state="error", error=f"{type(exc).__name__}: {exc}", message="failed")

    def _download(self, job: sources.JobEntry, gen: int) -> Path:
        s3, prefix, objects = self.sources.s3_profile(job.name)
        if not objects:
            raise LookupError(f"no profile files under {prefix}")
        tmp = tempfile.mkdtemp(prefix=f"sagelaunch-profile-{job.name}-")
        with self._lock:
            self._tmp = tmp
        total = sum(o["Size"] for o in objects) or 1
        done = 0
        root = Path(tmp)
        for o in objects:
            target = key_destination(root, o["Key"], o["Rel"])  # the one S3-to-disk mapping
            target.parent.mkdir(parents=True, exist_ok=True)
            s3.download_file(o["Bucket"], o["Key"], str(target))
            done += o["Size"]
            if not self._set(gen, progress=0.4 * done / total, message=f"downloading {o['Rel']} ({done}/{total} bytes)"):
                return root
        return root


def _profile_build() -> ModuleType:
    """profiler/ui/profile_build.py: reading a profile's files and building its views."""
    from sagelaunch.profiler.ui import profile_build  # lazy: the server starts and lists jobs without the analysis (numpy, msgspec: its import took 3x as long with them)

    return profile_build
