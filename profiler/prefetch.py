"""Read a trace ahead while `profile analyze` imports numpy and the analysis (~0.1 s of a cold run).

With two idle cores or more (and fork): a forked process reads, gunzips and decodes the trace into columns (profiler.
kineto_reader.read_parts, which needs the standard library and msgspec only) while this one imports; read_kineto
takes the columns and makes them numpy arrays. The child is forked before numpy is loaded, so it never pays numpy's
import, and this process never holds the decoded events. Otherwise a thread gunzips the file (ISA-L, like zlib,
releases the GIL) and read_kineto decodes the bytes it read: on a busy machine the fork's cost (~20 ms of CPU: the
child's fresh memory and its exit) buys no parallelism (measured: bench_profiler_analysis's "ours cold, 1 core").
"""

from __future__ import annotations

import threading
from pathlib import Path

from sagelaunch.profiler import kineto_reader, trace_cache, trace_chunks
from sagelaunch.profiler.trace_file import ProfileLoadError, read_trace_bytes


class _InChild:
    """read_parts(path) computed by a forked child."""

    def __init__(self, path: Path) -> None:
        # a big trace is decoded in chunks by the child and a grandchild when the machine has cores to spare
        # (read_parts' default): the parent's core is free again once its imports are done
        self.child = trace_chunks.Forked(kineto_reader.read_parts, path)

    def result(self):
        try:
            return self.child.result()
        except trace_chunks.WorkerLost:  # killed (out of memory?): the caller reads the trace itself
            return None


class _InThread:
    """The trace's bytes read and gunzipped by a thread; decoded here when taken."""

    def __init__(self, path: Path) -> None:
        self.path, self.raw = path, None
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            self.raw = read_trace_bytes(self.path)
        except ProfileLoadError as exc:  # raised to the reader when it takes the result
            self.raw = exc

    def result(self):
        self.thread.join()
        if isinstance(self.raw, ProfileLoadError):
            raise self.raw
        raw, self.raw = self.raw, None
        return kineto_reader.parts_of(raw, self.path)


def start(path) -> None:
    """Start reading `path` for read_kineto, when it is a trace file without a cached parse."""
    p = Path(path)
    if p.is_file() and p.name.endswith((".json", ".json.gz")) and trace_cache.cached(p) is None:
        forked = trace_chunks.can_fork() and trace_chunks.free_cores() >= 2
        kineto_reader.read_ahead(p, _InChild(p) if forked else _InThread(p))
