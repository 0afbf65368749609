"""The profile browser's job list: entries, their search, the cached catalog, and safe file listing.

A job is listed with the facts the page searches on (name, creation time, status) and where its
profile lives. Where jobs come from (the local registry, SageMaker) is the application's to say:
it hands the browser a `JobSources`. Locations come only from those sources — never from the
browser — so a request can name a job, not a path. A profile given on the command line (`profile ui PATH`) is
listed too, so it can be opened again after unloading; the page names it, the server looks the name up.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sagelaunch.jobspec.contract import STATUSES, host_profiler_dir
from sagelaunch.jobspec.names import path_name
from sagelaunch.jobspec.s3uri import parse_s3_uri, unsafe_key_reason
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.suggest import did_you_mean, fix_from_hint

SOURCES = ("local", "sagemaker", "path")  # "path": a profile given on the command line, listed by its name
PROFILE_SUFFIXES = (".parquet", ".json", ".json.gz")


@dataclass
class JobEntry:
    name: str
    source: str  # "local" | "sagemaker" | "path" (given on the command line)
    status: str
    created: str  # ISO 8601, UTC
    has_profile: bool
    location: str  # shown to the user: a folder or an s3:// prefix

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def path_entry(path) -> JobEntry:
    """A profile given on the command line (`sagelaunch profile ui PATH`): loaded as it is, never named by the page."""
    p = Path(path).resolve()
    created = datetime.fromtimestamp(p.stat().st_mtime, timezone.utc).isoformat(timespec="seconds")
    return JobEntry(name=p.name, source="path", status="Completed", created=created, has_profile=True, location=str(p))


def validate_job_name(name: Any) -> str:
    """A job name becomes a folder name: checked where every such name is (jobspec.names.path_name)."""
    return path_name(name, "job_name")


def validate_source(source: Any) -> str:
    if source not in SOURCES:
        raise SagelaunchError(f"source {source!r}: must be one of {', '.join(SOURCES)}", field="source", value=source,
                              allowed=", ".join(SOURCES),
                              fix=fix_from_hint(did_you_mean(source, SOURCES), f"use one of {', '.join(SOURCES)}"))
    return source


def iso_utc(value: Any) -> str:
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=timezone.utc)
        return value.astimezone(timezone.utc).isoformat(timespec="seconds")
    return str(value or "")


# ---------- local registry ----------

def local_profile_dirs(record: dict[str, Any]) -> list[Path]:
    """<JobDir>/algo-N/output/profiler folders of a local job that exist (symlinks not followed out)."""
    job_dir = record.get("JobDir")
    if not job_dir:
        return []
    root = Path(job_dir)
    out = []
    for host in sorted(root.glob("algo-*")):
        d = host_profiler_dir(root, host.name)
        if d.is_dir() and not d.is_symlink() and _inside(d, root):
            out.append(d)
    return out


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except ValueError:
        return False


def profile_files(folder: Path) -> list[Path]:
    """Profile files under `folder`, refusing any that resolve outside it (symlink escapes)."""
    files = []
    for p in sorted(folder.rglob("*")):
        if p.is_file() and p.name.endswith(PROFILE_SUFFIXES) and _inside(p, folder):
            files.append(p)
    return files


def s3_profile_objects(s3, prefix_uri: str) -> list[dict[str, Any]]:
    """Profile files under an s3:// prefix (with a boto3 S3 client), keys that could escape a folder left out."""
    bucket, prefix = parse_s3_uri(prefix_uri)
    out = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            rel = obj["Key"][len(prefix):]
            if obj["Key"].endswith(PROFILE_SUFFIXES) and unsafe_key_reason(rel) is None:  # jobspec's one rule
                out.append({"Bucket": bucket, "Key": obj["Key"], "Rel": rel, "Size": obj.get("Size", 0)})
    return out


# ---------- the sources, given by the application ----------

@dataclass(frozen=True)
class JobSources:
    """Where the browser finds jobs and their files. The application that starts the browser gives it
    (sagelaunch.profile_sources asks the launcher's registry and SageMaker); the profiler imports neither."""

    list_local: Callable[[], tuple[list[JobEntry], str]]  # → (jobs, "ok" or why none)
    list_sagemaker: Callable[[], tuple[list[JobEntry], str]]
    local_dirs: Callable[[str], list[Path]]  # job name → its profiler output folders
    s3_profile: Callable[[str], tuple[Any, str, list[dict[str, Any]]]]  # job name → (S3 client, prefix, objects)


def _none(*_: Any) -> Any:
    raise LookupError("the profile browser was started without job sources")


NO_SOURCES = JobSources(lambda: ([], "no job sources given"), lambda: ([], "no job sources given"), _none, _none)


# ---------- the combined, cached listing ----------

class JobCatalog:
    """Both sources, cached for `ttl` seconds so typing in the search box does not call AWS per key."""

    def __init__(self, sources: JobSources = NO_SOURCES, ttl: float = 10.0, include_sagemaker: bool = True):
        self.sources = sources
        self.ttl = ttl
        self.include_sagemaker = include_sagemaker
        self._lock = threading.Lock()
        self._cached: tuple[float, list[JobEntry], dict[str, str]] | None = None
        self.given: list[JobEntry] = []  # profiles given on the command line, listed first

    def add_given(self, entry: JobEntry) -> None:
        with self._lock:
            self.given = [j for j in self.given if j.name != entry.name] + [entry]

    def all(self, refresh: bool = False) -> tuple[list[JobEntry], dict[str, str]]:
        jobs, states = self._jobs(refresh)
        return self.given + jobs, states

    def _jobs(self, refresh: bool) -> tuple[list[JobEntry], dict[str, str]]:
        with self._lock:
            if not refresh and self._cached and time.monotonic() - self._cached[0] < self.ttl:
                return self._cached[1], self._cached[2]
            local, local_state = self.sources.list_local()
            if self.include_sagemaker:
                remote, remote_state = self.sources.list_sagemaker()
            else:
                remote, remote_state = [], "disabled (--no-sagemaker)"
            jobs = sorted(local + remote, key=lambda j: j.created, reverse=True)
            states = {"local": local_state, "sagemaker": remote_state}
            self._cached = (time.monotonic(), jobs, states)
            return jobs, states

    def find(self, name: str, source: str) -> JobEntry | None:
        validate_source(source)
        if source == "path":  # only an entry given on the command line; the name is never read as a path
            return next((j for j in self.given if j.name == name), None)
        validate_job_name(name)
        for refresh in (False, True):
            for j in self.all(refresh=refresh)[0]:
                if j.name == name and j.source == source:
                    return j
        return None


def filter_jobs(jobs: list[JobEntry], q: str = "", status: str = "", created_after: str = "",
                created_before: str = "") -> list[JobEntry]:
    """Case-insensitive name search; status one of STATUSES; created bounds as ISO dates or times."""
    if status and status not in STATUSES:
        raise SagelaunchError(f"status {status!r}: must be one of {', '.join(STATUSES)}", field="status", value=status,
                              allowed=", ".join(STATUSES),
                              fix=fix_from_hint(did_you_mean(status, STATUSES), f"use one of {', '.join(STATUSES)}"))
    after = _parse_when(created_after, "created_after")
    before = _parse_when(created_before, "created_before", end_of_day=True)
    q = (q or "").strip().lower()
    out = []
    for j in jobs:
        if q and q not in j.name.lower():
            continue
        if status and j.status != status:
            continue
        created = _parse_when(j.created, "created") if (after or before) else None
        if after and created and created < after:
            continue
        if before and created and created > before:
            continue
        out.append(j)
    return out


def _parse_when(text: str, field: str, end_of_day: bool = False) -> datetime | None:
    if not text:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise SagelaunchError(f"{field} {text!r}: not a date; use YYYY-MM-DD or an ISO 8601 time", field=field,
                              value=text, allowed="YYYY-MM-DD or an ISO 8601 time",
                              fix="use YYYY-MM-DD or an ISO 8601 time") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    if end_of_day and len(text) == 10:
        value = value.replace(hour=23, minute=59, second=59)
    return value
