"""Log lines of a local job: routed by the supervisor, followed by any client.

torchrun tees each rank's output with the prefix we give it (`[algo-1 rank0] `); lines without
one are torchrun's own (`[algo-1] `). One copy is stored: `logs/job.log`, every line prefixed by
its host and rank, in arrival order — what `jobs logs`, `fit`'s live view and JobFailedError read.
A rank's own view is a filter of it (rank_lines). torchrun's tee needs per-rank files of its own
(logs/torchrun/…/stdout.log); the supervisor deletes them when the job ends. torchrun's own lines
while it is being ended go to `logs/<host>.log` instead of job.log.

Memory stays bounded whatever the job prints: pipes are read at most MAX_LINE_BYTES at a time (a
longer line becomes several lines, each with the prefix), only the last TAIL_LINES lines per rank
are kept (for the failure reason), and readers take the file MAX_READ_BYTES at a time.
"""

from __future__ import annotations

import codecs
import os
import re
import threading
from collections import defaultdict, deque
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from sagelaunch.launcher.local.path_errors import with_path

PREFIX = re.compile(r"^\[(?P<host>algo-\d+) rank(?P<rank>\d+)\] ?")
# torchrun's default tee prefix, for torch versions that ignore TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE
DEFAULT_TORCH_PREFIX = re.compile(r"^\[default(?P<local_rank>\d+)\]:")
TAIL_LINES = 60
MAX_LINE_BYTES = 64 * 1024  # CloudWatch keeps 256 KB per event; a longer line is split
MAX_READ_BYTES = 1024 * 1024


def rank_prefix_template(host: str) -> str:
    """TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE for one host: torchrun substitutes the global rank."""
    return f"[{host} rank${{rank}}] "


class LogRouter:
    """Thread-safe sink for the lines of every host's streams."""

    def __init__(self, logs_dir: Path):
        self.logs_dir = logs_dir
        logs_dir.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._combined = open(logs_dir / "job.log", "a", buffering=1, encoding="utf-8")
        self._files: dict[str, IO[str]] = {}
        self.stderr_tails: dict[tuple[str, int | None], deque[str]] = defaultdict(lambda: deque(maxlen=TAIL_LINES))
        self.host_tails: dict[str, deque[str]] = defaultdict(lambda: deque(maxlen=TAIL_LINES))
        self.quiet: set[str] = set()  # hosts whose launcher lines go to <host>.log, not job.log
        # the first failed write, with its file: pipes are still drained (a rank blocked on a full pipe would hang
        # the job) and the supervisor fails the job naming the file
        self.write_error: OSError | None = None

    def _append(self, handle: IO[str] | None, text: str, path: Path) -> None:
        try:
            if handle is None:
                handle = self._file(path.stem)
            handle.write(text)
        except OSError as error:
            if self.write_error is None:
                self.write_error = with_path(error, path)

    def _file(self, name: str) -> IO[str]:
        if name not in self._files:
            self._files[name] = open(self.logs_dir / f"{name}.log", "a", buffering=1, encoding="utf-8")
        return self._files[name]

    def write(self, host: str, line: str, *, stream: str, rank: int | None = None, rank_base: int = 0,
              continued: bool = False) -> int | None:
        """Route one line; return its rank. `rank` is known for direct processes and for the rest of a split
        line (`continued`); torchrun's lines carry it in their prefix."""
        line = line.rstrip("\r\n")
        if rank is None and not continued:
            match = PREFIX.match(line)
            if match and match["host"] == host:
                rank, line = int(match["rank"]), line[match.end():]
            else:
                match = DEFAULT_TORCH_PREFIX.match(line)
                if match:
                    rank, line = rank_base + int(match["local_rank"]), line[match.end():]
        label = f"{host} rank{rank}" if rank is not None else host
        with self._lock:
            if rank is not None or host not in self.quiet:
                self._append(self._combined, f"[{label}] {line}\n", self.logs_dir / "job.log")
            else:
                self._append(None, line + "\n", self.logs_dir / f"{host}.log")
            if stream == "stderr":
                self.stderr_tails[(host, rank)].append(line)
            if rank is None:
                self.host_tails[host].append(line)
        return rank

    def note(self, message: str) -> None:
        """A line from the supervisor itself."""
        with self._lock:
            self._append(self._combined, f"[sagelaunch] {message}\n", self.logs_dir / "job.log")

    def pump(self, host: str, pipe: IO[bytes], *, stream: str, rank: int | None = None, rank_base: int = 0) -> None:
        """Read a pipe to its end (run in a thread per stream), MAX_LINE_BYTES at most at a time."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a character split across reads stays whole
        continued, line_rank = False, rank
        with pipe:
            for raw in iter(lambda: pipe.readline(MAX_LINE_BYTES), b""):
                text = decoder.decode(raw)
                line_rank = self.write(host, text, stream=stream, rank=line_rank if continued else rank,
                                       rank_base=rank_base, continued=continued)
                continued = not raw.endswith(b"\n")

    def close(self) -> None:
        with self._lock:
            for handle in [self._combined, *self._files.values()]:
                try:
                    handle.close()  # flushes: a write that failed before fails again here
                except OSError as error:
                    self.write_error = self.write_error or with_path(error, handle.name)


class LogFollower:
    """Reads complete lines appended to a file since the last call (the file may not exist yet)."""

    def __init__(self, path: Path):
        self.path = path
        self._offset = 0
        self._partial = b""

    def read(self, final: bool = False) -> Iterator[str]:
        """Every line appended since the last read, up to the end of the file, MAX_READ_BYTES at a time."""
        try:
            handle = open(self.path, "rb")
        except FileNotFoundError:
            return
        with handle:
            handle.seek(self._offset)
            while data := handle.read(MAX_READ_BYTES):
                self._offset += len(data)
                lines = (self._partial + data).split(b"\n")
                self._partial = lines.pop()
                if len(self._partial) > MAX_READ_BYTES:  # not written by us: pass it on in pieces
                    lines.append(self._partial)
                    self._partial = b""
                for line in lines:
                    yield line.decode("utf-8", errors="replace")
        if final and self._partial:
            line, self._partial = self._partial, b""
            yield line.decode("utf-8", errors="replace")


def read_lines(path: Path) -> Iterator[str]:
    """Every line of a log file, read MAX_READ_BYTES at a time."""
    return LogFollower(path).read(final=True)


def tail_lines(path: Path, count: int) -> list[str]:
    """The last `count` lines of a file, read backwards from its end (at most MAX_READ_BYTES)."""
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return []
    with handle:
        end = handle.seek(0, os.SEEK_END)
        start = max(0, end - MAX_READ_BYTES)
        handle.seek(start)
        data = handle.read(end - start)
    lines = data.decode("utf-8", errors="replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if start > 0 and len(lines) > count:
        lines = lines[1:]  # the first may be cut
    return lines[-count:]


def rank_lines(path: Path, host: str, rank: int) -> Iterator[str]:
    """One rank's view of job.log: its lines, without the prefix."""
    prefix = f"[{host} rank{rank}] "
    return (line[len(prefix):] for line in read_lines(path) if line.startswith(prefix))


def drop_torchrun_copies(torchrun_logs: Path) -> None:
    """torchrun's tee files hold a second copy of every rank's output: job.log has it all once the job ended."""
    for name in ("stdout.log", "stderr.log"):
        for path in torchrun_logs.rglob(name):
            try:
                path.unlink()
            except OSError:
                pass
