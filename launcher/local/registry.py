"""The local job registry: one SQLite database under $SAGELAUNCH_HOME (default ~/.sagelaunch).

Each row holds one job's record in DescribeTrainingJob's shape (plus "JobDir"; launcher.local.record), so local and
SageMaker jobs describe the same way. Several notebooks, the CLI and each job's supervisor
write at once: the database runs in WAL mode and every read-modify-write is one
`BEGIN IMMEDIATE` transaction, so writers queue instead of losing updates.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import warnings
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from sagelaunch.jobspec.contract import TERMINAL_STATUSES
from sagelaunch.jobspec.names import path_name
from sagelaunch.jobspec.suggest import did_you_mean
from sagelaunch.launcher.local.record import check_record
from sagelaunch.launcher.common.safe_write import private_file, private_folder
from sagelaunch.jobspec.errors import SagelaunchError

# Fields holding times: stored as ISO strings, returned as aware datetimes (boto3's shape).
_TIME_FIELDS = ("CreationTime", "TrainingStartTime", "TrainingEndTime", "LastModifiedTime")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    name TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    record TEXT NOT NULL,
    supervisor_pid INTEGER,
    supervisor_started REAL
)
"""
# Added after the first release: registries created before get them on first use.
_ADDED_COLUMNS = {
    "watchdog_pid": "INTEGER",  # the supervisor's parent, which ends the job's processes if the supervisor dies
    "watchdog_started": "REAL",
    "processes": "TEXT",  # JSON [[pid, create time, pgid], …]: the job's processes, for ending survivors
}


def home() -> Path:
    """$SAGELAUNCH_HOME, default ~/.sagelaunch."""
    return Path(os.environ.get("SAGELAUNCH_HOME") or "~/.sagelaunch").expanduser().resolve()


def jobs_root() -> Path:
    return home() / "jobs"


def job_dir(name: str) -> Path:
    return jobs_root() / path_name(name, "job_name")


def db_path() -> Path:
    return home() / "registry.db"


def now() -> datetime:
    return datetime.now(timezone.utc)


_local = threading.local()


DOCTOR = "`sagelaunch jobs doctor`"


class RegistryDamageWarning(UserWarning):
    """Records of the registry that cannot be read were left out of a listing."""


def damaged(path: Path, what: str) -> SagelaunchError:
    fix = f"run {DOCTOR}: it keeps every record that can be read and sets the damaged file aside"
    return SagelaunchError(f"SAGELAUNCH_HOME: the local job registry {str(path)!r} is damaged ({what}); {fix}",
                           field="SAGELAUNCH_HOME", value=str(path), allowed="a registry sagelaunch wrote", fix=fix)


def is_damage(error: BaseException) -> bool:
    """SQLite's word for a file that is no database or a damaged one (not a lock, a full disk, a taken name)."""
    return isinstance(error, sqlite3.DatabaseError) and not isinstance(
        error, (sqlite3.OperationalError, sqlite3.IntegrityError))


@contextmanager
def _connect() -> Iterator[sqlite3.Connection]:
    """This thread's connection to the current registry (kept open: reopening costs a WAL checkpoint); a damaged
    file is one line naming it and the repair, never SQLite's traceback."""
    path = db_path()
    try:
        with _connection(path) as conn:
            yield conn
    except sqlite3.DatabaseError as error:
        if not is_damage(error):
            raise
        raise damaged(path, str(error)) from None


def forget_connections() -> None:
    """Close this thread's connections (the doctor replaces the file under them)."""
    for conn in getattr(_local, "connections", {}).values():
        conn.close()
    _local.connections = {}


@contextmanager
def _connection(path: Path) -> Iterator[sqlite3.Connection]:
    key = (os.getpid(), str(path))
    conn = getattr(_local, "connections", {}).get(key)
    if conn is None:
        with _path_named(path):
            private_folder(path.parent)  # records hold hyperparameters and environment: the owner's only
            for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                if file == path or file.exists():  # SQLite gives the files it adds the database's mode
                    private_file(file)
            # autocommit mode: transactions are explicit (BEGIN IMMEDIATE) where they matter
            conn = sqlite3.connect(path, timeout=60, isolation_level=None)
            conn.execute("PRAGMA busy_timeout=60000")
            _set_up(conn)
        _local.connections = {**getattr(_local, "connections", {}), key: conn}
    yield conn


def _set_up(conn: sqlite3.Connection) -> None:
    """WAL mode and the table. Switching to WAL answers "database is locked" at once, without waiting, while another
    process opens a new registry at the same moment: retried for up to a minute, as every other statement waits."""
    deadline = time.monotonic() + 60
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
            have = {row[1] for row in conn.execute("PRAGMA table_info(jobs)")}
            for column, kind in _ADDED_COLUMNS.items():
                if column not in have:
                    try:
                        conn.execute(f"ALTER TABLE jobs ADD COLUMN {column} {kind}")
                    except sqlite3.OperationalError:  # another process added it meanwhile
                        pass
            return
        except sqlite3.OperationalError as error:
            # SQLITE_BUSY (5) / SQLITE_LOCKED (6): named in the sqlite3 module from Python 3.11 only
            busy = getattr(error, "sqlite_errorcode", None) in (5, 6)
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


@contextmanager
def _path_named(path: Path) -> Iterator[None]:
    """The registry's file errors name the database and the setting that places it (a read-only or full home)."""
    try:
        yield
    except (OSError, sqlite3.OperationalError) as error:
        raise SagelaunchError(f"SAGELAUNCH_HOME: the local job registry {str(path)!r} cannot be opened or written "
                              f"({error}); make {str(path.parent)!r} writable, or set SAGELAUNCH_HOME to a folder you "
                              "can write to", field="SAGELAUNCH_HOME", value=str(path.parent),
                              allowed="a folder you can write to",
                              fix=f"make {str(path.parent)!r} writable, or set SAGELAUNCH_HOME to a folder you can "
                                  "write to") from error


def _encode(record: dict[str, Any]) -> str:
    return json.dumps(record, default=_json_default, sort_keys=True)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).isoformat()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"cannot store {type(value).__name__} in a job record")


def decode_row(name: str, stored: bytes | str) -> dict[str, Any]:
    """A stored record, checked; a damaged one is an error naming the job, the file and the repair."""
    try:
        record = _decode(stored.decode("utf-8") if isinstance(stored, bytes) else stored)
        check_record(record)
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise damaged(db_path(), f"the record of job {name!r} cannot be read: {type(error).__name__}") from None
    return record


def _decode(text: str) -> dict[str, Any]:
    record = json.loads(text)
    for key in _TIME_FIELDS:
        if isinstance(record.get(key), str):
            record[key] = datetime.fromisoformat(record[key])
    for transition in record.get("SecondaryStatusTransitions", []):
        for key in ("StartTime", "EndTime"):
            if isinstance(transition.get(key), str):
                transition[key] = datetime.fromisoformat(transition[key])
    return record


def _name_taken(name: str) -> SagelaunchError:
    fix = "choose another job_name (or leave it unset to generate one)"
    return SagelaunchError(f"job_name {name!r}: a local job with this name already exists in {db_path()}; "
                           f"job names are unique — {fix}", field="job_name", value=name,
                           allowed="a name no local job has", fix=fix)


def check_new_name(name: str) -> None:
    """Raise when `name` is already taken (as SageMaker's CreateTrainingJob does)."""
    if exists(name):
        raise _name_taken(name)


def create(record: dict[str, Any]) -> None:
    """Add a new job; a name already in the registry is rejected."""
    check_record(record)
    name = record["TrainingJobName"]
    with _connect() as conn, _path_named(db_path()):
        try:
            conn.execute(
                "INSERT INTO jobs (name, status, created, record) VALUES (?, ?, ?, ?)",
                (name, record["TrainingJobStatus"], _json_default(record["CreationTime"]), _encode(record)),
            )
        except sqlite3.IntegrityError:
            raise _name_taken(name) from None


def exists(name: str) -> bool:
    with _connect() as conn:
        return conn.execute("SELECT 1 FROM jobs WHERE name = ?", (name,)).fetchone() is not None


def get(name: str) -> dict[str, Any]:
    """The job's DescribeTrainingJob-shaped record (with "JobDir")."""
    with _connect() as conn:
        row = conn.execute("SELECT CAST(record AS BLOB) FROM jobs WHERE name = ?", (name,)).fetchone()
        if row is None:
            names = [r[0] for r in conn.execute("SELECT name FROM jobs")]
    if row is None:
        hint = (did_you_mean(name, names, form="; did you mean {}?")
                or f"; `sagelaunch jobs list` shows the {len(names)} known jobs")
        raise KeyError(f"no local job named {name!r} in {db_path()}{hint}")
    return decode_row(name, row[0])


def list_jobs(status: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """Records, newest first; `status` filters on TrainingJobStatus. A record that cannot be read is left out and
    named in one RegistryDamageWarning: one bad record never hides the others."""
    query = "SELECT name, CAST(record AS BLOB) FROM jobs"
    args: list[str | int] = []
    if status is not None:
        query += " WHERE status = ?"
        args.append(status)
    query += " ORDER BY created DESC"
    if limit is not None:
        query += " LIMIT ?"
        args.append(int(limit))
    with _connect() as conn:
        rows = conn.execute(query, args).fetchall()
    records, bad = [], []
    for name, stored in rows:
        try:
            records.append(decode_row(name, stored))
        except SagelaunchError:
            bad.append(name)
    if bad:
        warnings.warn(RegistryDamageWarning(
            f"the local job registry {str(db_path())!r} holds {len(bad)} damaged record(s), left out: "
            f"{', '.join(map(repr, bad))}; run {DOCTOR}"), stacklevel=2)
    return records


def update(name: str, change: Callable[[dict[str, Any]], None] | None = None, **fields: Any) -> dict[str, Any]:
    """Atomically apply `fields` (and `change(record)`) to a job's record; return the new record."""
    with _connect() as conn, _path_named(db_path()):
        conn.execute("BEGIN IMMEDIATE")
        try:
            row = conn.execute("SELECT CAST(record AS BLOB) FROM jobs WHERE name = ?", (name,)).fetchone()
            if row is None:
                raise KeyError(f"no local job named {name!r} in {db_path()}")
            record = decode_row(name, row[0])
            record.update(fields)
            if change is not None:
                change(record)
            record["LastModifiedTime"] = now()
            check_record(record)
            conn.execute(
                "UPDATE jobs SET record = ?, status = ? WHERE name = ?",
                (_encode(record), record["TrainingJobStatus"], name),
            )
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:  # a failed COMMIT (a full disk) has already rolled back
                conn.execute("ROLLBACK")
            raise
    return record


def transition(name: str, secondary_status: str, message: str, **fields: Any) -> dict[str, Any]:
    """Close the current secondary status and open `secondary_status` (DescribeTrainingJob's history)."""
    return update(name, lambda record: _open_status(record, secondary_status, message), **fields)


def _open_status(record: dict[str, Any], secondary_status: str, message: str) -> None:
    stamp = now()
    history = record.setdefault("SecondaryStatusTransitions", [])
    if history and "EndTime" not in history[-1]:
        history[-1]["EndTime"] = stamp
    entry = {"Status": secondary_status, "StartTime": stamp, "StatusMessage": message}
    if record["TrainingJobStatus"] in TERMINAL_STATUSES:
        entry["EndTime"] = stamp  # a final status has no duration
    history.append(entry)
    record["SecondaryStatus"] = secondary_status


def fail_unless_ended(name: str, reason: str) -> dict[str, Any]:
    """Mark a job Failed with `reason` — in one transaction, unless it reached a final status meanwhile."""

    def change(record: dict[str, Any]) -> None:
        if record["TrainingJobStatus"] not in TERMINAL_STATUSES:
            record.update(TrainingJobStatus="Failed", FailureReason=reason, TrainingEndTime=now())
            _open_status(record, "Failed", "Training job failed")

    return update(name, change)


def set_supervisor(name: str, pid: int, started: float) -> None:
    """Remember the process that supervises a job (its pid and create time, to rule out pid reuse)."""
    with _connect() as conn:
        conn.execute("UPDATE jobs SET supervisor_pid = ?, supervisor_started = ? WHERE name = ?", (pid, started, name))


def supervisor(name: str) -> tuple[int, float] | None:
    with _connect() as conn:
        row = conn.execute("SELECT supervisor_pid, supervisor_started FROM jobs WHERE name = ?", (name,)).fetchone()
    return (row[0], row[1]) if row and row[0] is not None else None


def set_watchdog(name: str, pid: int, started: float) -> None:
    with _connect() as conn:
        conn.execute("UPDATE jobs SET watchdog_pid = ?, watchdog_started = ? WHERE name = ?", (pid, started, name))


def watchdog(name: str) -> tuple[int, float] | None:
    with _connect() as conn:
        row = conn.execute("SELECT watchdog_pid, watchdog_started FROM jobs WHERE name = ?", (name,)).fetchone()
    return (row[0], row[1]) if row and row[0] is not None else None


def set_processes(name: str, found: list[tuple[int, float, int]]) -> None:
    """Record the job's processes as (pid, create time, process group): whoever finds the job unwatched ends them."""
    with _connect() as conn:
        conn.execute("UPDATE jobs SET processes = ? WHERE name = ?", (json.dumps(found), name))


def processes(name: str) -> list[tuple[int, float, int]]:
    with _connect() as conn:
        row = conn.execute("SELECT processes FROM jobs WHERE name = ?", (name,)).fetchone()
    return [tuple(entry) for entry in json.loads(row[0])] if row and row[0] else []


def restore_columns(name: str, columns: dict[str, Any]) -> None:
    """The doctor puts back a kept row's supervisor, watchdog and process columns as they were."""
    known = {"supervisor_pid", "supervisor_started", *_ADDED_COLUMNS}
    for column, value in columns.items():
        if column in known:
            with _connect() as conn:
                conn.execute(f"UPDATE jobs SET {column} = ? WHERE name = ?", (value, name))


def delete(name: str) -> None:
    """Forget a job (its folder stays)."""
    with _connect() as conn:
        conn.execute("DELETE FROM jobs WHERE name = ?", (name,))
