"""The profile browser's job sources: the launcher's local registry and SageMaker (with S3).

The glue between the application's parts: `sagelaunch.profiler.ui` shows jobs it is given, `launcher` knows
where jobs are. `job_sources()` is what `sagelaunch profile ui` hands the browser.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sagelaunch.launcher import NO_REGION, configured_region, list_jobs, local_registry, profiler_output_uri
from sagelaunch.profiler.ui.sources import (JobEntry, JobSources, iso_utc, local_profile_dirs, profile_files, s3_profile_objects,
                                 validate_job_name)

log = logging.getLogger(__name__)
MAX_SAGEMAKER_JOBS = 100  # the browser lists at most this many SageMaker jobs, newest first


def job_sources() -> JobSources:
    return JobSources(list_local=list_local, list_sagemaker=list_sagemaker, local_dirs=local_job_dirs,
                      s3_profile=sagemaker_profile)


# ---------- local registry ----------

def list_local() -> tuple[list[JobEntry], str]:
    try:
        records = list_jobs("local")
    except Exception as exc:  # noqa: BLE001 - a broken registry must not take the page down
        return [], f"cannot read the local registry: {exc}"
    jobs = []
    for rec in records:
        name = rec.get("TrainingJobName", "")
        if not _valid_name(name):
            continue
        dirs = local_profile_dirs(rec)
        has = any(profile_files(d) for d in dirs)
        jobs.append(JobEntry(name, "local", rec.get("TrainingJobStatus", ""), iso_utc(rec.get("CreationTime")),
                             has, str(Path(rec["JobDir"])) if rec.get("JobDir") else ""))
    return jobs, "ok"


def local_job_dirs(name: str) -> list[Path]:
    return local_profile_dirs(local_registry.get(validate_job_name(name)))


def _valid_name(name: Any) -> bool:
    try:
        validate_job_name(name)
        return True
    except ValueError:
        return False


# ---------- SageMaker ----------

def aws_available() -> str | None:
    """None when boto3 has credentials and a region, else why not."""
    try:
        import boto3
    except ImportError:
        return "boto3 is not installed"

    if configured_region() is None:
        return NO_REGION
    if boto3.Session().get_credentials() is None:
        return "no AWS credentials (the standard credential chain found none)"
    return None


def _clients():
    import boto3
    from botocore.config import Config

    config = Config(connect_timeout=3, read_timeout=10, retries={"max_attempts": 2})
    region = configured_region()  # the same region rule as every other command (boto3 alone ignores AWS_REGION)
    session = boto3.session.Session(region_name=region)  # not boto3's default session: it keeps the first profile
    return session.client("sagemaker", config=config), session.client("s3", config=config)


def list_sagemaker() -> tuple[list[JobEntry], str]:
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
                            iso_utc(desc.get("CreationTime", s.get("CreationTime"))), has, prefix)

        # one DescribeTrainingJob (+ one S3 listing) per job: a few at a time (boto3 clients are thread-safe)
        with ThreadPoolExecutor(max_workers=8) as pool:
            jobs = [j for j in pool.map(entry, summaries) if j is not None]
        return jobs, "ok"
    except Exception as exc:  # noqa: BLE001 - shown on the page; the local list still works
        return [], f"cannot list SageMaker jobs: {type(exc).__name__}: {exc}"


def sagemaker_profile(name: str) -> tuple[Any, str, list[dict[str, Any]]]:
    """(S3 client, profile prefix, profile objects) of a SageMaker job, for the browser to download."""
    _, s3 = _clients()
    prefix = sagemaker_prefix(name)
    return s3, prefix, s3_profile_objects(s3, prefix)


def sagemaker_prefix(name: str) -> str:
    sm, _ = _clients()
    prefix = profiler_output_uri(sm.describe_training_job(TrainingJobName=validate_job_name(name)))
    if prefix is None:
        raise LookupError(f"SageMaker job {name!r} has no profiler output (ProfilerConfig disabled or absent)")
    return prefix


