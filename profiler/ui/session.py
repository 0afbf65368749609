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
import time
from pathlib import Path
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchRuntimeError
from sagelaunch.jobspec.s3uri import key_destination
from sagelaunch.profiler import artifact
from sagelaunch.profiler.loader import find_profile_files, load_profile
from sagelaunch.profiler.report.data import dashboard_data
from sagelaunch.profiler.schema import Profile
from sagelaunch.profiler.timeline.payload import payload_of
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
        try:
            if job.source == "path":
                profile = self._read_path(Path(job.location), gen)
                self._build(job, profile, gen)
                return
            if job.source == "local":
                roots: list[tuple[Path, str | None]] = [(d, d.parents[1].name)
                                                        for d in self.sources.local_dirs(job.name)]
                if not roots:
                    raise LookupError(f"local job {job.name!r} has no profiler output under its job folder")
                span = (0.0, 0.8)
            else:
                roots = [(self._download(job, gen), None)]
                span = (0.4, 0.8)
            profile = self._read(roots, gen, span)
            self._build(job, profile, gen)
        except Exception as exc:  # noqa: BLE001 - shown in the page; the server keeps running
            log.warning("loading %s failed: %s", job.name, exc)
            self._set(gen, state="error", error=f"{type(exc).__name__}: {exc}", message="failed")

    def _read_path(self, path: Path, gen: int):
        """A trace file or any folder given on the command line: the loader reads it as `profile analyze` would."""
        if path.is_dir():
            return self._read([(path, None)], gen, (0.0, 0.8))
        self._set(gen, progress=0.1, message=f"reading {path.name}")
        return load_profile(path)

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

    def _read(self, roots: list[tuple[Path, str | None]], gen: int, span: tuple[float, float]):
        import pyarrow as pa

        units: list[tuple[str, list[Path], str | None]] = []
        for root, host in roots:
            kineto, ours, system = find_profile_files(root)
            keep = lambda ps, root=root: [p for p in ps if sources._inside(p, root)]  # noqa: E731 - no symlink escapes
            units += [("events", keep(files), host) for _, files in sorted(ours.items()) if keep(files)]
            units += [("kineto", [p], host) for p in keep(kineto)]
            if keep(system):
                units.append(("system", keep(system), host))
        if not units:
            raise LookupError("no profile files (trace-*.parquet, system-*.parquet, *.json, *.json.gz) found")
        total = sum(p.stat().st_size for _, files, _ in units for p in files) or 1
        done = 0
        ranks: dict[int, Any] = {}
        counters, warnings = [], []
        for kind, files, host in units:
            self._set(gen, message=f"reading {files[0].name}" + (f" (+{len(files) - 1} files)" if len(files) > 1 else ""))
            try:
                if kind == "system":
                    counters.append(artifact.read_counters(files))
                else:
                    read = ([artifact.read_events(files)] if kind == "events"
                            else list(load_profile(files[0]).ranks.values()))
                    for rt in read:
                        if host and not rt.meta.host:
                            rt.meta.host = host
                        r = rt.meta.rank
                        if r in ranks:
                            new = max(ranks) + 1
                            warnings.append(f"two traces say rank {r} ({rt.meta.source}); showing the second as rank {new}")
                            rt.meta.rank = r = new
                        ranks[r] = rt
                        warnings.extend(rt.meta.warnings)
            except ValueError as exc:
                warnings.append(f"skipped {files[0].name}: {exc}")
            done += sum(p.stat().st_size for p in files)
            if not self._set(gen, progress=span[0] + (span[1] - span[0]) * done / total):
                break
        if not ranks and not counters:
            raise LookupError("nothing readable: " + "; ".join(warnings))
        table = pa.concat_tables(counters, promote_options="permissive") if counters else None
        return Profile(ranks=dict(sorted(ranks.items())), counters=table, source=", ".join(str(r) for r, _ in roots),
                       warnings=warnings)

    def _build(self, job: sources.JobEntry, profile, gen: int) -> None:
        import orjson

        t = time.perf_counter()
        self._set(gen, progress=0.82, message="analysing")
        dash = dashboard_data(profile, title=job.name)
        self._set(gen, progress=0.9, message="building the timeline")
        payload, events = payload_of(profile, title=job.name)
        dash_json = orjson.dumps(dash, option=orjson.OPT_SERIALIZE_NUMPY)
        tl_json = orjson.dumps(payload)
        summary = {"ranks": sorted(profile.ranks), "events": events, "warnings": profile.warnings[:20],
                   "build_s": round(time.perf_counter() - t, 3)}
        self._set(gen, dashboard_json=dash_json, timeline_json=tl_json, summary=summary, state="loaded",
                  progress=1.0, message="loaded")
