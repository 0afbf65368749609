"""The local endpoints that are running: one JSON file each under $SAGELAUNCH_HOME/endpoints/.

A server writes its record once it listens and removes it when it ends; a record whose process is gone
(or whose pid now belongs to another process: the start time differs) is stale and dropped when read.
`sagelaunch endpoints list|stop` read these records; LocalEndpoint refuses a name that is already served.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import signal
from dataclasses import asdict, dataclass
from pathlib import Path

from sagelaunch.jobspec.names import path_name
from sagelaunch.launcher.local.registry import home
from sagelaunch.jobspec.errors import SagelaunchError

STOP_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class EndpointRecord:
    name: str
    url: str
    pid: int
    started: float  # the server process's start time (psutil), which tells a reused pid apart
    workdir: str  # the server's temporary folder, removed when it ends
    model_data: str
    owner_pid: int | None  # the process whose exit ends the server; None: detached

    @property
    def detached(self) -> bool:
        return self.owner_pid is None


def endpoints_root() -> Path:
    return home() / "endpoints"


def _record_path(name: str) -> Path:
    return endpoints_root() / f"{path_name(name, 'endpoint_name')}.json"


def claim(name: str) -> int:
    """Hold `name` for one server: an exclusive lock on endpoints/<name>.lock, taken before the server starts and
    handed to it (pass_fds), which holds it for its life. The kernel drops it when the last holder ends, however it
    ends, so two deploys of one name never both start. Returns the descriptor; raises when the name is taken."""
    root = endpoints_root()
    root.mkdir(parents=True, exist_ok=True)
    fd = os.open(root / f"{path_name(name, 'endpoint_name')}.lock", os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        running = find(name)
        where = f"served at {running.url} (pid {running.pid})" if running else "being started by another process"
        fix = f"stop it with `sagelaunch endpoints stop {name}` or choose another endpoint_name"
        raise SagelaunchError(f"endpoint_name={name!r} is already {where}; {fix}", field="endpoint_name", value=name,
                              allowed="a name no local endpoint serves", fix=fix) from None
    return fd


def process_start_time(pid: int) -> float | None:
    import psutil

    try:
        process = psutil.Process(pid)
        return None if process.status() == psutil.STATUS_ZOMBIE else process.create_time()
    except psutil.Error:
        return None


def register(record: EndpointRecord) -> None:
    root = endpoints_root()
    root.mkdir(parents=True, exist_ok=True)
    partial = root / f".{record.name}.{record.pid}.partial"
    partial.write_text(json.dumps(asdict(record)))
    partial.replace(_record_path(record.name))


def unregister(name: str, pid: int) -> None:
    """Remove the record of `name` if it is this server's (a newer server may have taken the name)."""
    record = _read(_record_path(name))
    if record is not None and record.pid == pid:
        _record_path(name).unlink(missing_ok=True)


def _read(path: Path) -> EndpointRecord | None:
    try:
        return EndpointRecord(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None


def _alive(record: EndpointRecord) -> bool:
    started = process_start_time(record.pid)
    return started is not None and abs(started - record.started) < 1.0


def live_endpoints() -> list[EndpointRecord]:
    """The running endpoints, by name; stale records are removed on the way."""
    live = []
    for path in sorted(endpoints_root().glob("*.json")) if endpoints_root().is_dir() else []:
        record = _read(path)
        if record is not None and _alive(record):
            live.append(record)
        else:
            path.unlink(missing_ok=True)
    return live


def find(name: str) -> EndpointRecord | None:
    record = _read(_record_path(name))
    if record is not None and _alive(record):
        return record
    _record_path(name).unlink(missing_ok=True)
    return None


def stop(name: str, timeout: float = STOP_TIMEOUT_S) -> EndpointRecord:
    """End the endpoint `name` (SIGTERM, then SIGKILL after `timeout`) and remove its folder and record."""
    record = find(name)
    if record is None:
        known = ", ".join(r.name for r in live_endpoints()) or "none"
        raise SagelaunchError(f"no running local endpoint named {name!r} (running: {known}); "
                              "see `sagelaunch endpoints list`", field="name", value=name, allowed=known,
                              fix="see `sagelaunch endpoints list`")
    _end_process(record, timeout)
    shutil.rmtree(record.workdir, ignore_errors=True)  # the server removes it itself unless it was killed
    unregister(record.name, record.pid)
    return record


def _end_process(record: EndpointRecord, timeout: float) -> None:
    import psutil

    try:
        process = psutil.Process(record.pid)
        if abs(process.create_time() - record.started) >= 1.0:
            return  # the pid was reused: the server is already gone
        os.kill(record.pid, signal.SIGTERM)
        try:
            process.wait(timeout)
        except psutil.TimeoutExpired:
            process.kill()
            process.wait(timeout)
    except psutil.NoSuchProcess:
        pass

