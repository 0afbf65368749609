"""A local job's files: its settings private (0600 files in 0700 folders), its archives complete or absent, and a
file error naming the path and the setting that chose it (issue 24). Full and read-only filesystems are real
mounts (tests/local/mounts.py)."""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import tarfile
import time
from contextlib import closing
from pathlib import Path

import pytest

from sagelaunch.launcher.local import registry
from sagelaunch.launcher.backends import submit
from sagelaunch.launcher.local.host_layout import HostLayout
from sagelaunch.launcher.common.jobs import JobFailedError
from sagelaunch.launcher.local import artifacts
from tests.local.conftest import make_spec
from tests.local.mounts import immutable, read_only, small_filesystem

SECRET = "s3cr3t-Value-42"
LOADED_MACHINE_S = 180


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def partials(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.partial"))


def test_an_existing_registry_is_made_private(tmp_path, monkeypatch):
    """A registry made before (0755 folder, 0644 database) is tightened the first time it is opened."""
    home = tmp_path / "old-home"
    home.mkdir(mode=0o755)
    with closing(sqlite3.connect(home / "registry.db")) as db:
        db.execute("CREATE TABLE t (x)")
    (home / "registry.db").chmod(0o644)
    monkeypatch.setenv("SAGELAUNCH_HOME", str(home))
    assert registry.list_jobs() == []
    assert mode(home) == 0o700 and mode(home / "registry.db") == 0o600
    for extra in ("registry.db-wal", "registry.db-shm"):  # SQLite gives them the database's mode
        if (home / extra).exists():
            assert mode(home / extra) == 0o600, extra


def test_making_a_file_private_keeps_this_processs_locks_on_it(tmp_path):
    """SQLite locks its files with POSIX locks, which closing any descriptor of the file drops: tightening the mode
    of an open registry must not open it (a second thread's connection once broke the first one's locks)."""
    import fcntl
    import subprocess
    import sys

    from sagelaunch.launcher.common.safe_write import private_file

    path = tmp_path / "locked.db"
    path.write_bytes(b"x")
    path.chmod(0o644)
    with open(path, "r+b") as held:
        fcntl.lockf(held, fcntl.LOCK_EX)
        private_file(path)
        probe = ("import fcntl, sys; f = open(sys.argv[1], 'r+b')\n"
                 "try: fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB); print('free')\n"
                 "except OSError: print('held')")
        other = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=60)
    assert other.stdout.strip() == "held" and mode(path) == 0o600


def test_a_read_only_home_is_one_line_naming_sagelaunch_home(tmp_path, monkeypatch):
    home = tmp_path / "frozen-home"
    home.mkdir()
    monkeypatch.setenv("SAGELAUNCH_HOME", str(home))
    with immutable(home), pytest.raises(ValueError) as refused:
        registry.list_jobs()
    assert str(refused.value).startswith(f"SAGELAUNCH_HOME: the local job registry {str(home / 'registry.db')!r} "
                                         "cannot be opened or written ([Errno 1] Operation not permitted")
    assert str(refused.value).endswith(f"make {str(home)!r} writable, or set SAGELAUNCH_HOME to a folder you can "
                                       "write to")


def test_a_full_home_refuses_the_job_in_one_line_naming_the_file(tmp_path, monkeypatch):
    """Laying out the job folder fills its disk: the error names the file (sendfile names none) and the job is
    recorded Failed with the same words."""
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text("print('never runs')\n")
    (code / "big.bin").write_bytes(os.urandom(3 * 1024 * 1024))
    home = tmp_path / "home"
    monkeypatch.setenv("SAGELAUNCH_HOME", str(home))
    with small_filesystem(home / "jobs", "1m") as jobs:  # the registry beside it has room to record the failure
        spec = make_spec("train.py", source_dir=str(code))
        with pytest.raises(ValueError) as refused:
            submit(spec, wait=False, logs=False)
        job_dir = jobs / spec.job_name
        expected = (f"job folder (under SAGELAUNCH_HOME) {str(job_dir)!r}: cannot write "
                    f"{str(job_dir / 'algo-1' / 'code' / 'big.bin')!r}: No space left on device (errno 28) — the disk "
                    "is full: free space there or choose another folder, then run the job again")
        assert str(refused.value) == f"job {spec.job_name}: {expected}"
        assert registry.get(spec.job_name)["FailureReason"] == f"ClientError: {expected}"


def _layout_with_model(root: Path, size: int) -> dict[str, HostLayout]:
    layout = HostLayout(root / "algo-1")
    layout.model_dir.mkdir(parents=True)
    layout.output_data_dir.mkdir(parents=True)
    (layout.model_dir / "weights.bin").write_bytes(os.urandom(size))
    return {"algo-1": layout}


def test_a_full_disk_leaves_no_truncated_archive_under_its_name(tmp_path):
    with small_filesystem(tmp_path / "small", "1m") as small:
        fits = artifacts.publish(_layout_with_model(tmp_path / "a", 64 * 1024), str(small / "fits"),
                                 tmp_path / "staging", None, "fits")
        with tarfile.open(fits["model"]) as archive:  # complete: every member reads back
            assert [m.name for m in archive.getmembers()] == ["weights.bin"]
        with pytest.raises(OSError) as full:
            artifacts.publish(_layout_with_model(tmp_path / "b", 3 * 1024 * 1024), str(small / "full"),
                              tmp_path / "staging", None, "full")
        assert full.value.errno == errno.ENOSPC
        assert full.value.filename == str(small / "full" / "output" / "model.tar.gz")  # named, though never written
        assert not (small / "full" / "output" / "model.tar.gz").exists()
        assert partials(small) == []  # the temporary file is gone too: the space is free again


def test_an_upload_staged_on_a_full_disk_puts_nothing_in_s3(tmp_path, moto_server):
    import boto3

    s3 = boto3.client("s3", region_name="us-west-2")
    bucket = "files-staged-on-a-full-disk"
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    with small_filesystem(tmp_path / "staging", "1m") as staging:
        placed = artifacts.publish(_layout_with_model(tmp_path / "a", 64 * 1024), f"s3://{bucket}/fits", staging,
                                   "us-west-2", "fits")
        assert placed["model"] == f"s3://{bucket}/fits/output/model.tar.gz"
        with pytest.raises(OSError) as full:
            artifacts.publish(_layout_with_model(tmp_path / "b", 3 * 1024 * 1024), f"s3://{bucket}/full", staging,
                              "us-west-2", "full")
        assert full.value.errno == errno.ENOSPC and partials(staging) == []
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert "fits/output/model.tar.gz" in keys and not [k for k in keys if k.startswith("full/")], keys


def _final(name: str) -> dict:
    deadline = time.monotonic() + LOADED_MACHINE_S
    while (record := registry.get(name))["TrainingJobStatus"] not in registry.TERMINAL_STATUSES:
        assert time.monotonic() < deadline, f"{name} still {record['TrainingJobStatus']}"
        time.sleep(0.1)
    return record


def _wait_started(marks: Path) -> None:
    deadline = time.monotonic() + LOADED_MACHINE_S
    while not (marks / "started").exists():  # the rank runs: its folders and log files are open
        assert time.monotonic() < deadline, "the job's rank never started"
        time.sleep(0.05)


def _until_go(marks: Path, **overrides):
    marks.mkdir(exist_ok=True)
    hyperparameters = {"marks": str(marks), **overrides.pop("hyperparameters", {})}
    return make_spec("until_go.py", hyperparameters=hyperparameters, **overrides)


@pytest.mark.slow
def test_a_local_jobs_secrets_are_stored_for_its_owner_only(tmp_path, sagelaunch_home):
    marks = tmp_path / "marks"
    spec = _until_go(marks, environment={"DB_PASSWORD": SECRET}, hyperparameters={"api_token": SECRET})
    (marks / "go").touch()
    record = submit(spec, wait=True, logs=False).describe()
    assert record["TrainingJobStatus"] == "Completed"
    job_dir = Path(record["JobDir"])
    config = job_dir / "algo-1" / "input" / "config"
    assert SECRET in (job_dir / "plan.json").read_text() and SECRET in (config / "hyperparameters.json").read_text()
    for folder in (sagelaunch_home, sagelaunch_home / "jobs", job_dir):
        assert mode(folder) == 0o700, folder
    private = [sagelaunch_home / "registry.db", job_dir / "plan.json", *sorted(config.glob("*.json"))]
    assert len(private) >= 5
    for file in private:
        assert mode(file) == 0o600, file


@pytest.mark.slow
def test_a_full_output_disk_fails_the_job_naming_output_path(tmp_path):
    marks = tmp_path / "marks"
    with small_filesystem(tmp_path / "small", "1m") as small:
        spec = _until_go(marks, output_path=str(small), hyperparameters={"model_bytes": 3 * 1024 * 1024})
        (marks / "go").touch()
        with pytest.raises(JobFailedError):
            submit(spec, wait=True, logs=False)
        reason = _final(spec.job_name)["FailureReason"]
        model = small / spec.job_name / "output" / "model.tar.gz"
        assert reason == (f"ClientError: could not publish artifacts: output_path {str(small)!r}: cannot write "
                          f"{str(model)!r}: No space left on device (errno 28) — the disk is full: free space there "
                          "or choose another folder, then run the job again")
        assert not model.exists() and partials(small) == []


@pytest.mark.slow
def test_a_job_folder_turned_read_only_fails_naming_its_path(tmp_path):
    marks = tmp_path / "marks"
    spec = _until_go(marks, hyperparameters={"model_bytes": 0})
    job = submit(spec, wait=False, logs=False)
    _wait_started(marks)
    job_dir = registry.job_dir(spec.job_name)
    with read_only(job_dir):
        (marks / "go").touch()
        record = _final(spec.job_name)
    assert record["TrainingJobStatus"] == "Failed"
    reason = record["FailureReason"]
    assert "PermissionError(" not in reason and "OSError(" not in reason
    assert reason == (f"ClientError: could not publish artifacts: job folder (under SAGELAUNCH_HOME) {str(job_dir)!r}: "
                      f"cannot write {str(job_dir / 'artifacts')!r}: Read-only file system (errno 30) — the filesystem "
                      "is read-only: remount it read-write or choose another folder, then run the job again")
    with pytest.raises(JobFailedError, match="Read-only file system"):
        job.wait(logs=False)


@pytest.mark.slow
def test_a_log_file_turned_immutable_fails_the_job_naming_it(tmp_path):
    """Writes to an open job.log fail with no file name (the supervisor died of `PermissionError(1, 'Operation not
    permitted')` with an empty log): the ranks' pipes keep draining and the job fails naming the file."""
    marks = tmp_path / "marks"
    spec = _until_go(marks, hyperparameters={"model_bytes": 0})
    job = submit(spec, wait=False, logs=False)
    _wait_started(marks)
    log = registry.job_dir(spec.job_name) / "logs" / "job.log"
    with immutable(log):
        (marks / "go").touch()
        record = _final(spec.job_name)
    assert record["TrainingJobStatus"] == "Failed"  # the script succeeded, but its output was lost
    assert record["FailureReason"] == (
        f"ClientError: the job's log could not be written: job folder (under SAGELAUNCH_HOME) {str(log.parents[1])!r}: "
        f"cannot write {str(log)!r}: Operation not permitted (errno 1) — make it writable (chmod u+w; chattr -i where "
        "a file or folder is immutable), then run the job again")
    with pytest.raises(JobFailedError, match="job.log"):
        job.wait(logs=False)
