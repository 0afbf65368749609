"""A damaged registry (issue 32): a registry.db that is no database is one line naming the file and the repair (no
SQLite traceback); one unreadable record never hides the others; `sagelaunch jobs doctor` keeps every record that can
be read, restores the jobs whose record was lost from their folders, and sets the damaged file aside."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from sagelaunch import cli_jobs
from sagelaunch.launcher.local import registry


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    registry.forget_connections()
    yield tmp_path / "home"
    registry.forget_connections()


def set_aside(home: Path) -> list[Path]:
    """The damaged database the doctor set aside (its -wal and -shm files go beside it)."""
    return [p for p in home.glob("registry.db.damaged-*") if not p.name.endswith(("-wal", "-shm"))]


def cli(*args: str):
    app = typer.Typer()
    cli_jobs.register(app)
    return CliRunner().invoke(app, ["jobs", *args])


def add_job(name: str) -> None:
    job_dir = registry.job_dir(name)
    job_dir.mkdir(parents=True)
    now = datetime.now(timezone.utc)
    registry.create({"TrainingJobName": name, "TrainingJobStatus": "Completed", "SecondaryStatus": "Completed",
                     "CreationTime": now, "LastModifiedTime": now, "JobDir": str(job_dir)})


def damage_record(name: str, stored: bytes) -> None:
    with sqlite3.connect(registry.db_path()) as conn:
        conn.execute("UPDATE jobs SET record = ? WHERE name = ?", (stored, name))


def test_a_registry_that_is_no_database_is_one_line_naming_it(home):
    home.mkdir()
    registry.db_path().write_bytes(b"this is not a database, it was overwritten by mistake" * 100)
    result = cli("list", "--backend", "local")
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert lines == [f"error: SAGELAUNCH_HOME: the local job registry {str(registry.db_path())!r} is damaged (file is "
                     "not a database); run `sagelaunch jobs doctor`: it keeps every record that can be read and sets "
                     "the damaged file aside"], result.output


@pytest.mark.parametrize("stored", [b"{not json", b"\xff\xfe not utf-8", b'{"TrainingJobName": "half"}'])
def test_one_damaged_record_hides_no_other_job(home, stored):
    for name in ("first-job", "bad-job", "last-job"):
        add_job(name)
    damage_record("bad-job", stored)
    result = cli("list", "--backend", "local", "--json")
    assert result.exit_code == 0, result.output
    assert "first-job" in result.output and "last-job" in result.output and '"Name": "bad-job"' not in result.output
    assert ("warning: the local job registry" in result.output
            and "holds 1 damaged record(s), left out: 'bad-job'; run `sagelaunch jobs doctor`" in result.output)
    described = cli("describe", "bad-job")
    assert described.exit_code == 1 and "the record of job 'bad-job' cannot be read" in described.output


def test_the_doctor_keeps_good_records_and_restores_lost_ones_from_their_folders(home):
    for name in ("first-job", "bad-job", "last-job"):
        add_job(name)
    registry.set_supervisor("first-job", 4242, 123.5)
    damage_record("bad-job", b"{not json")
    result = cli("doctor")
    assert result.exit_code == 0, result.output
    assert "kept 2 record(s), restored 1 from job folders, dropped 1 unreadable" in result.output
    assert sorted(r["TrainingJobName"] for r in registry.list_jobs()) == ["bad-job", "first-job", "last-job"]
    assert registry.get("first-job")["TrainingJobStatus"] == "Completed"
    assert registry.supervisor("first-job") == (4242, 123.5)
    lost = registry.get("bad-job")
    assert lost["TrainingJobStatus"] == "Failed" and "registry record was lost" in lost["FailureReason"]
    aside = set_aside(home)
    assert len(aside) == 1 and aside[0].stat().st_size > 0
    assert "sound, 3 job record(s); nothing changed" in cli("doctor").output


def test_the_doctor_rebuilds_a_registry_that_is_no_database_from_the_job_folders(home):
    for name in ("one-job", "two-job"):
        add_job(name)
    registry.forget_connections()
    for suffix in ("-wal", "-shm"):
        Path(f"{registry.db_path()}{suffix}").unlink(missing_ok=True)
    registry.db_path().write_bytes(b"\x00garbage" * 512)
    result = cli("doctor")
    assert result.exit_code == 0, result.output
    assert sorted(r["TrainingJobName"] for r in registry.list_jobs()) == ["one-job", "two-job"]
    assert set_aside(home)[0].read_bytes() == b"\x00garbage" * 512
