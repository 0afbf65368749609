"""Profiled jobs for the browser tests: a local registry under a temporary SAGELAUNCH_HOME.

Jobs are written with the launcher's registry and laid out as the local backend does
(<home>/jobs/<job>/algo-N/output/profiler/…): our Parquet artifact (events from a real V100 Kineto trace
plus system-monitor counters), plain Kineto traces, a CPU-only run, a job without profile, and a job
whose only "profile file" is a symlink to a file outside the job (it must never be read).
"""

from __future__ import annotations

import contextlib
import os
import shutil
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

TRACES = Path(__file__).resolve().parents[2] / "tests" / "data" / "traces"
SECRET = "TOP-SECRET-OUTSIDE-THE-JOB"


def trace(name: str) -> Path:
    return TRACES / name


def write_artifact_job(profiler_dir: Path, host: str) -> None:
    """Our artifact for one host: rank-0 events from the V100 trace + CPU/GPU counters over its span."""
    import pyarrow as pa

    from sagelaunch.profiler import artifact
    from sagelaunch.profiler.kineto_reader import read_kineto

    rank = read_kineto(trace("v100_rank0.pt.trace.json.gz"))
    rank.meta.host = host
    artifact.write_events(rank, profiler_dir / host / "rank-0" / "trace-0000.parquet")
    lo, hi = int(rank["ts_ns"].min()), int((rank["ts_ns"] + rank["dur_ns"]).max())
    ts = np.linspace(lo, hi, 60).astype(np.int64)
    rows = {"ts_ns": [], "host": [], "metric": [], "index": [], "value": []}
    rng = np.random.default_rng(0)
    for metric, indexes, base in (("cpu_util", [-1, 0, 1, 2, 3], 40.0), ("gpu_util", [0], 85.0), ("host_mem_util", [-1], 30.0)):
        for idx in indexes:
            rows["ts_ns"] += ts.tolist()
            rows["host"] += [host] * len(ts)
            rows["metric"] += [metric] * len(ts)
            rows["index"] += [idx] * len(ts)
            rows["value"] += np.clip(base + rng.normal(0, 8, len(ts)), 0, 100).tolist()
    table = pa.table({
        "ts_ns": pa.array(rows["ts_ns"], pa.int64()),
        "host": pa.array(rows["host"]).dictionary_encode(),
        "metric": pa.array(rows["metric"]).dictionary_encode(),
        "index": pa.array(rows["index"], pa.int32()),
        "value": pa.array(rows["value"], pa.float32()),
    })
    artifact.write_counters(table, profiler_dir / host / "system-0000.parquet", {"host": host})


def _record(name: str, status: str, created: datetime, job_dir: Path) -> dict:
    return {
        "TrainingJobName": name,
        "TrainingJobArn": f"arn:aws:sagemaker:local:000000000000:training-job/{name}",
        "TrainingJobStatus": status,
        "SecondaryStatus": status,
        "CreationTime": created,
        "LastModifiedTime": created,
        "ProfilerConfig": {"S3OutputPath": str(job_dir / "output"), "ProfilingIntervalInMilliseconds": 500},
        "JobDir": str(job_dir),
    }


@pytest.fixture(scope="module")
def profile_home(tmp_path_factory):
    """SAGELAUNCH_HOME with five local jobs; yields {"home", "jobs": {name: job_dir}, "secret": path}."""
    from sagelaunch.launcher.local import registry

    home = tmp_path_factory.mktemp("sagelaunch-home")
    saved = os.environ.get("SAGELAUNCH_HOME")
    os.environ["SAGELAUNCH_HOME"] = str(home)
    outside = tmp_path_factory.mktemp("outside") / "trace.json"
    outside.write_text('{"traceEvents": [{"ph": "X", "name": "%s", "cat": "kernel", "ts": 1, "dur": 1, '
                       '"pid": 0, "tid": 7, "args": {"device": 0, "stream": 7}}]}' % SECRET)
    base = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
    jobs = {}

    def job(name: str, status: str, days: int) -> Path:
        d = registry.job_dir(name)
        (d / "algo-1" / "output" / "profiler").mkdir(parents=True)
        registry.create(_record(name, status, base + timedelta(days=days), d))
        jobs[name] = d
        return d

    d = job("profui-resnet-v100", "Completed", 0)
    write_artifact_job(d / "algo-1" / "output" / "profiler", "algo-1")
    d = job("profui-cpu-only", "Failed", 1)
    shutil.copy(trace("cpu_only.pt.trace.json.gz"), d / "algo-1" / "output" / "profiler")
    d = job("profui-two-hosts", "InProgress", 2)
    shutil.copy(trace("sampled_rank0.pt.trace.json.gz"), d / "algo-1" / "output" / "profiler")
    (d / "algo-2" / "output" / "profiler").mkdir(parents=True)
    shutil.copy(trace("sampled_rank1.pt.trace.json.gz"), d / "algo-2" / "output" / "profiler")
    d = job("profui-no-profile", "Stopped", 3)
    shutil.rmtree(d / "algo-1" / "output" / "profiler")
    d = job("profui-escape", "Stopping", 4)
    (d / "algo-1" / "output" / "profiler" / "trace.json").symlink_to(outside)
    try:
        yield {"home": home, "jobs": jobs, "secret": outside}
    finally:
        if saved is None:
            os.environ.pop("SAGELAUNCH_HOME", None)
        else:
            os.environ["SAGELAUNCH_HOME"] = saved


@contextlib.contextmanager
def serve_profile_browser(include_sagemaker: bool, **limits):
    """The profile browser on 127.0.0.1 on a free port, shut down on exit (limits: idle_timeout, max_connections)."""
    from sagelaunch.profiler.ui.server import ProfileBrowser
    from sagelaunch.profile_sources import job_sources

    server = ProfileBrowser(0, include_sagemaker=include_sagemaker, job_sources=job_sources(), **limits)
    server.start_background()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def ui_server(profile_home):
    """The profile browser on 127.0.0.1 (local jobs only), for the module."""
    with serve_profile_browser(include_sagemaker=False) as server:
        yield server
