"""Log lines of a local job: routed by the supervisor, followed by any client.

torchrun tees each rank's output with the prefix we give it (`[algo-1 rank0] `); lines without
one are torchrun's own (`[algo-1] `). The supervisor appends every line, prefixed, to
`logs/job.log` and the bare line to `logs/<host>-rank<N>.log` (or `logs/<host>.log`), and keeps
each rank's last stderr lines for the failure reason. Clients follow job.log from any process.
"""

from __future__ import annotations

import re
import threading
from collections import defaultdict, deque
from collections.abc import Iterator
from pathlib import Path
from typing import IO

PREFIX = re.compile(r"^\[(?P<host>algo-\d+) rank(?P<rank>\d+)\] ?")
# torchrun's default tee prefix, for torch versions that ignore TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE
DEFAULT_TORCH_PREFIX = re.compile(r"^\[default(?P<local_rank>\d+)\]:")
TAIL_LINES = 60


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
        self.quiet: set[str] = set()  # hosts whose launcher lines stay out of job.log

    def _file(self, name: str) -> IO[str]:
        if name not in self._files:
            self._files[name] = open(self.logs_dir / f"{name}.log", "a", buffering=1, encoding="utf-8")
        return self._files[name]

    def write(self, host: str, line: str, *, stream: str, rank: int | None = None, rank_base: int = 0) -> None:
        """Route one line. `rank` is known for direct processes; torchrun lines carry it in their prefix."""
        line = line.rstrip("\r\n")
        if rank is None:
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
                self._combined.write(f"[{label}] {line}\n")
            self._file(f"{host}-rank{rank}" if rank is not None else host).write(line + "\n")
            if stream == "stderr":
                self.stderr_tails[(host, rank)].append(line)
            if rank is None:
                self.host_tails[host].append(line)

    def note(self, message: str) -> None:
        """A line from the supervisor itself."""
        with self._lock:
            self._combined.write(f"[sagelaunch] {message}\n")

    def pump(self, host: str, pipe: IO[bytes], *, stream: str, rank: int | None = None, rank_base: int = 0) -> None:
        """Read a pipe to its end (run in a thread per stream)."""
        with pipe:
            for raw in iter(pipe.readline, b""):
                self.write(host, raw.decode("utf-8", errors="replace"), stream=stream, rank=rank, rank_base=rank_base)

    def close(self) -> None:
        with self._lock:
            for handle in [self._combined, *self._files.values()]:
                handle.close()


class LogFollower:
    """Reads complete lines appended to a file since the last call (the file may not exist yet)."""

    def __init__(self, path: Path):
        self.path = path
        self._offset = 0
        self._partial = b""

    def read(self, final: bool = False) -> list[str]:
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self._offset)
                data = handle.read()
        except FileNotFoundError:
            return []
        self._offset += len(data)
        data = self._partial + data
        lines = data.split(b"\n")
        self._partial = lines.pop()
        if final and self._partial:
            lines.append(self._partial)
            self._partial = b""
        return [line.decode("utf-8", errors="replace") for line in lines]


def read_lines(path: Path) -> Iterator[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                yield line.rstrip("\n")
    except FileNotFoundError:
        return
