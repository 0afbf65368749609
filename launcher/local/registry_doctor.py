"""`sagelaunch jobs doctor`: repair a damaged local job registry, keeping what can be kept.

Every row SQLite can still read whose record is a local job's record is kept as it was (its supervisor, watchdog and
process columns too); a job folder under $SAGELAUNCH_HOME/jobs whose record was lost gets a Failed record saying so,
so the registry lists every job again. The damaged file is never deleted: it is set aside beside the new one.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from sagelaunch.launcher.local import registry

_COLUMNS = ("name", "status", "created", "supervisor_pid", "supervisor_started", "watchdog_pid", "watchdog_started",
            "processes")


@dataclass
class RepairReport:
    path: Path
    sound: bool  # nothing to repair: the file was left as it was
    kept: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)  # rows that could be read, but not as a job's record
    restored: list[str] = field(default_factory=list)  # job folders whose record was lost: now Failed, saying so
    set_aside: Path | None = None

    def lines(self) -> list[str]:
        if self.sound:
            return [f"{self.path}: sound, {len(self.kept)} job record(s); nothing changed"]
        lines = [f"{self.path}: repaired — kept {len(self.kept)} record(s), restored {len(self.restored)} from job "
                 f"folders, dropped {len(self.dropped)} unreadable"]
        if self.dropped:
            lines.append("dropped: " + ", ".join(self.dropped))
        if self.restored:
            lines.append("restored as Failed (record lost): " + ", ".join(self.restored))
        if self.set_aside:
            lines.append(f"the damaged file is kept at {self.set_aside}")
        return lines


def _readable_rows(path: Path) -> tuple[list[dict[str, Any]], bool]:
    """The rows SQLite can still read, one by one, and whether the whole file read cleanly."""
    rows: list[dict[str, Any]] = []
    try:
        conn = sqlite3.connect(path, timeout=60)
    except sqlite3.Error:
        return rows, False
    try:
        try:
            clean = conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            have = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
            rowids = [r[0] for r in conn.execute("SELECT rowid FROM jobs")]
        except sqlite3.DatabaseError:
            return rows, False
        columns = [c for c in _COLUMNS if c in have]
        for rowid in rowids:
            try:
                values = conn.execute(f"SELECT {', '.join(columns)}, CAST(record AS BLOB) FROM jobs WHERE rowid = ?",
                                      (rowid,)).fetchone()
            except sqlite3.DatabaseError:
                clean = False
                continue
            rows.append({**dict(zip(columns, values[:-1])), "record": values[-1]})
        return rows, clean
    finally:
        conn.close()


def _check(row: dict[str, Any]) -> dict[str, Any] | None:
    try:
        return registry.decode_row(str(row["name"]), row["record"])
    except ValueError:
        return None


def _lost_record(job_dir: Path) -> dict[str, Any]:
    created = datetime.fromtimestamp(job_dir.stat().st_mtime, timezone.utc)
    reason = (f"ClientError: this job's registry record was lost (the registry was damaged); {registry.DOCTOR} "
              "restored it from the job folder — its logs and outputs are as the job left them")
    return {"TrainingJobName": job_dir.name, "TrainingJobStatus": "Failed", "SecondaryStatus": "Failed",
            "SecondaryStatusTransitions": [{"Status": "Failed", "StartTime": created, "EndTime": created,
                                            "StatusMessage": "Training job record lost"}],
            "CreationTime": created, "LastModifiedTime": registry.now(), "JobDir": str(job_dir),
            "FailureReason": reason}


def repair() -> RepairReport:
    path = registry.db_path()
    rows, clean = _readable_rows(path) if path.exists() else ([], True)
    good = [(row, record) for row in rows if (record := _check(row)) is not None]
    report = RepairReport(path, sound=False, kept=[str(row["name"]) for row, _ in good],
                          dropped=[repr(row["name"]) for row in rows if _check(row) is None])
    folders = sorted(p for p in registry.jobs_root().iterdir() if p.is_dir()) if registry.jobs_root().is_dir() else []
    lost = [folder for folder in folders if folder.name not in set(report.kept)]
    if clean and not report.dropped and not lost:
        report.sound = True
        return report
    registry.forget_connections()
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    if path.exists():
        report.set_aside = path.with_name(f"{path.name}.damaged-{stamp}")
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{path}{suffix}").exists():
                os.replace(f"{path}{suffix}", f"{report.set_aside}{suffix}")
    for row, record in good:
        registry.create(record)
        registry.restore_columns(str(row["name"]), {c: row[c] for c in _COLUMNS[3:] if c in row})
    for folder in lost:
        registry.create(_lost_record(folder))
        report.restored.append(folder.name)
    return report
