"""Read a trace ahead while `profile analyze` imports numpy and the analysis (~0.1 s of a cold run).

With two cores or more (and fork): a forked process reads, gunzips and decodes the trace into columns (profiler.
kineto_reader.read_parts, which needs the standard library and msgspec only) while this one imports; read_kineto
takes the columns (take_parts) and makes them numpy arrays. The child is forked before numpy is loaded, so it
never pays numpy's import, and this process never holds the decoded events. On one core: a thread gunzips the file
(ISA-L, like zlib, releases the GIL) and read_kineto takes the bytes (take).

This module imports nothing heavy on purpose.
"""

from __future__ import annotations

import threading
from pathlib import Path

from sagelaunch.profiler.trace_file import ProfileLoadError, read_trace_bytes

_results: dict[str, object] = {}
_threads: dict[str, threading.Thread] = {}
_children: dict[str, object] = {}  # key -> trace_chunks.Forked


def _work(key: str, path: Path) -> None:
    try:
        _results[key] = read_trace_bytes(path)
    except ProfileLoadError as exc:  # raised to the reader when it takes the bytes
        _results[key] = exc


def start(path) -> None:
    from sagelaunch.profiler import trace_cache, trace_chunks

    p = Path(path)
    if p.is_file() and p.name.endswith((".json", ".json.gz")) and trace_cache.cached(p) is None:
        key = str(p.resolve())
        if trace_chunks.can_fork() and trace_chunks.usable_cores() >= 2:
            # imported before the fork, so that both processes share it: this one needs it too
            from sagelaunch.profiler.kineto_reader import read_parts

            # a big trace is decoded in chunks by the child and a grandchild when the machine has cores to spare
            # (read_parts' default): the parent's core is free again once its imports are done
            _children[key] = trace_chunks.Forked(read_parts, p)
            return
        _threads[key] = threading.Thread(target=_work, args=(key, p), daemon=True)
        _threads[key].start()


def take(path: Path) -> bytes | bytearray | None:
    """The prefetched bytes of `path` (once), or None when it was not prefetched; raises what reading raised."""
    key = str(path.resolve())
    thread = _threads.pop(key, None)
    if thread is None:
        return None
    thread.join()
    result = _results.pop(key, None)
    if isinstance(result, ProfileLoadError):
        raise result
    return result


def take_parts(path: Path):
    """kineto_reader.read_parts(path) as the forked reader computed it (once), or None when none was started or
    it ended without answering (the caller reads the trace itself); raises what reading raised."""
    from sagelaunch.profiler.trace_chunks import WorkerLost

    child = _children.pop(str(path.resolve()), None)
    if child is None:
        return None
    try:
        return child.result()
    except WorkerLost:
        return None
