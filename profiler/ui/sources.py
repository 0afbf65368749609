"""Where the profile browser finds profiled jobs: the local registry and SageMaker (S3).

A job is listed with the facts the page searches on (name, creation time, status) and where its
profile lives. Locations come only from the registry record or from DescribeTrainingJob — never
from the browser — so a request can name a job, not a path.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

JOB_NAME = re.compile(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$")  # SageMaker's TrainingJobName pattern
STATUSES = ("InProgress", "Completed", "Failed", "Stopping", "Stopped")
SOURCES = ("local", "sagemaker")
PROFILE_SUFFIXES = (".parquet", ".json", ".json.gz")
MAX_SAGEMAKER_JOBS = 100


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
    if not isinstance(name, str) or not JOB_NAME.match(name):
        raise ValueError(
            f"job name {name!r}: not a training job name (1-63 letters, digits and hyphens, "
            "starting with a letter or digit)"
        )
    return name


def validate_source(source: Any) -> str:
    if source not in SOURCES:
        raise ValueError(f"source {source!r}: must be one of {', '.join(SOURCES)}")
    return source


def _iso(value: Any) -> str:
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
        d = host / "output" / "profiler"
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


def list_local() -> tuple[list[JobEntry], str]:
    try:
        from launcher import registry
    except ImportError:
        return [], "the local registry (launcher.registry) is not installed"
    try:
        records = registry.list_jobs()
    except Exception as exc:  # noqa: BLE001 - a broken registry must not take the page down
        return [], f"cannot read the local registry: {exc}"
    jobs = []
    for rec in records:
        name = rec.get("TrainingJobName", "")
        if not JOB_NAME.match(name or ""):
            continue
        dirs = local_profile_dirs(rec)
        has = any(profile_files(d) for d in dirs)
        jobs.append(JobEntry(name, "local", rec.get("TrainingJobStatus", ""), _iso(rec.get("CreationTime")),
                             has, str(Path(rec["JobDir"])) if rec.get("JobDir") else ""))
    return jobs, "ok"


def local_job_dirs(name: str) -> list[Path]:
    from launcher import registry

    return local_profile_dirs(registry.get(validate_job_name(name)))


# ---------- SageMaker ----------

def aws_available() -> str | None:
    """None when boto3 has credentials and a region, else why not."""
    try:
        import boto3
    except ImportError:
        return "boto3 is not installed"
    session = boto3.Session()
    if session.region_name is None:
        return "no AWS region configured (set AWS_REGION)"
    if session.get_credentials() is None:
        return "no AWS credentials (the standard credential chain found none)"
    return None


def _clients():
    import boto3
    from botocore.config import Config

    config = Config(connect_timeout=3, read_timeout=10, retries={"max_attempts": 2})
    return boto3.client("sagemaker", config=config), boto3.client("s3", config=config)


def s3_profile_objects(s3, prefix_uri: str) -> list[dict[str, Any]]:
    from launcher.aws.s3 import parse_s3_uri

    bucket, prefix = parse_s3_uri(prefix_uri)
    out = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        for obj in page.get("Contents", []):
            rel = obj["Key"][len(prefix):]
            if obj["Key"].endswith(PROFILE_SUFFIXES) and safe_relative(rel):
                out.append({"Bucket": bucket, "Key": obj["Key"], "Rel": rel, "Size": obj.get("Size", 0)})
    return out


def safe_relative(rel: str) -> bool:
    """A key below the prefix that is safe to recreate under a cache folder (no .., no absolute parts)."""
    parts = rel.split("/")
    return bool(rel) and not rel.startswith("/") and all(p not in ("", ".", "..") for p in parts) and "\\" not in rel


def list_sagemaker() -> tuple[list[JobEntry], str]:
    from launcher.backends.sagemaker import profiler_output_uri  # one rule for the profile location

    why = aws_available()
    if why:
        return [], why
    try:
        sm, s3 = _clients()
        summaries = []
        for page in sm.get_paginator("list_training_jobs").paginate(
            SortBy="CreationTime", SortOrder="Descending", PaginationConfig={"MaxItems": MAX_SAGEMAKER_JOBS}
        ):
            summaries.extend(page.get("TrainingJobSummaries", []))

        def entry(s: dict[str, Any]) -> JobEntry | None:
            name = s["TrainingJobName"]
            desc = sm.describe_training_job(TrainingJobName=name)
            prefix = profiler_output_uri(desc)
            if prefix is None:
                return None  # not profiled
            try:
                has = bool(s3_profile_objects(s3, prefix))
            except Exception as exc:  # noqa: BLE001 - one unreadable bucket should not hide the others
                log.info("cannot list %s: %s", prefix, exc)
                has = False
            return JobEntry(name, "sagemaker", desc.get("TrainingJobStatus", s.get("TrainingJobStatus", "")),
                            _iso(desc.get("CreationTime", s.get("CreationTime"))), has, prefix)

        # one DescribeTrainingJob (+ one S3 listing) per job: a few at a time (boto3 clients are thread-safe)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=8) as pool:
            jobs = [j for j in pool.map(entry, summaries) if j is not None]
        return jobs, "ok"
    except Exception as exc:  # noqa: BLE001 - shown on the page; the local list still works
        return [], f"cannot list SageMaker jobs: {type(exc).__name__}: {exc}"


def sagemaker_prefix(name: str) -> str:
    from launcher.backends.sagemaker import profiler_output_uri  # one rule for the profile location

    sm, _ = _clients()
    prefix = profiler_output_uri(sm.describe_training_job(TrainingJobName=validate_job_name(name)))
    if prefix is None:
        raise LookupError(f"SageMaker job {name!r} has no profiler output (ProfilerConfig disabled or absent)")
    return prefix


# ---------- the combined, cached listing ----------

class JobCatalog:
    """Both sources, cached for `ttl` seconds so typing in the search box does not call AWS per key."""

    def __init__(self, ttl: float = 10.0, include_sagemaker: bool = True):
        self.ttl = ttl
        self.include_sagemaker = include_sagemaker
        self._lock = threading.Lock()
        self._cached: tuple[float, list[JobEntry], dict[str, str]] | None = None

    def all(self, refresh: bool = False) -> tuple[list[JobEntry], dict[str, str]]:
        with self._lock:
            if not refresh and self._cached and time.monotonic() - self._cached[0] < self.ttl:
                return self._cached[1], self._cached[2]
            local, local_state = list_local()
            if self.include_sagemaker:
                remote, remote_state = list_sagemaker()
            else:
                remote, remote_state = [], "disabled (--no-sagemaker)"
            jobs = sorted(local + remote, key=lambda j: j.created, reverse=True)
            states = {"local": local_state, "sagemaker": remote_state}
            self._cached = (time.monotonic(), jobs, states)
            return jobs, states

    def find(self, name: str, source: str) -> JobEntry | None:
        validate_job_name(name)
        validate_source(source)
        for refresh in (False, True):
            for j in self.all(refresh=refresh)[0]:
                if j.name == name and j.source == source:
                    return j
        return None


def filter_jobs(jobs: list[JobEntry], q: str = "", status: str = "", created_after: str = "",
                created_before: str = "") -> list[JobEntry]:
    """Case-insensitive name search; status one of STATUSES; created bounds as ISO dates or times."""
    if status and status not in STATUSES:
        raise ValueError(f"status {status!r}: must be one of {', '.join(STATUSES)}")
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
        raise ValueError(f"{field} {text!r}: not a date; use YYYY-MM-DD or an ISO 8601 time") from None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    if end_of_day and len(text) == 10:
        value = value.replace(hour=23, minute=59, second=59)
    return value
