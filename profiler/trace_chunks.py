"""Split a big trace's ``traceEvents`` array into chunks of whole events, and map a function over chunks in
forked worker processes. Stdlib only: the decoding itself is profiler.kineto_reader's.

Why: decoding and building columns is ~0.1 s of CPU per 15 MB of JSON in one thread (msgspec and the column
lists hold the GIL). Chunks decoded in forked children (which share the parent's imports and the JSON bytes,
copy-on-write) spread that over the cores, and each process only ever holds one chunk's decoded events, so a
huge trace needs memory for its JSON and its columns, not for a whole tree of decoded events.

Splitting does not parse: a chunk ends at a ``}`` followed by ``,`` and ``{`` (blanks between) found near its
share of the bytes. Such a spot may still lie inside a string or a nested list of objects, but then the chunk is not valid JSON (an open string or an
unclosed object) and its decode fails: the caller then decodes the trace whole. A chunk that decodes is
therefore a run of whole events, and the chunks in order are exactly the array's events.
"""

from __future__ import annotations

import os
import pickle
import sys
import threading

from sagelaunch.jobspec.errors import SagelaunchRuntimeError

MIN_CHUNK_BYTES = 4 << 20  # below two of these a trace is decoded whole: forking costs more than it saves
MAX_CHUNK_BYTES = 64 << 20  # bounds one process's decoded events on giant traces


class WorkerLost(SagelaunchRuntimeError):
    """A forked worker ended without sending its result (killed, out of memory)."""


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def free_cores() -> int:
    """The usable cores not already busy (1-minute load average, as `make -l` reads it), at least 1: on a saturated
    machine chunks decoded in parallel only add their ~20% of extra CPU (head scan, copies, results sent back)."""
    cores = usable_cores()
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):
        return cores
    return max(1, min(cores, int(cores - busy + 0.5)))


def chunk_count(size: int, workers: int) -> int:
    """How many chunks for `size` bytes of events: one per worker when each gets at least MIN_CHUNK_BYTES,
    and never one over MAX_CHUNK_BYTES."""
    by_cores = max(1, min(workers, size // MIN_CHUNK_BYTES))
    return max(by_cores, -(-size // MAX_CHUNK_BYTES))


def split_array(text: bytes, count: int) -> list[tuple[int, int]]:
    """(start, end) byte ranges of `text` (a JSON array of objects, brackets included) cut into about `count` runs
    at ``},`` + ``{`` spots near equal shares: each range, bracketed (see chunk), is a JSON array if the cuts are
    between events."""
    inner_start, inner_end = text.index(b"[") + 1, text.rindex(b"]")
    ranges, start = [], inner_start
    for k in range(1, count):
        cut = text.find(b"},", max(start, inner_start + k * (inner_end - inner_start) // count), inner_end)
        while cut >= 0 and text[cut + 2:cut + 40].lstrip()[:1] != b"{":  # "}, "key"": the end of a nested object
            cut = text.find(b"},", cut + 2, inner_end)
        if cut < 0:
            break
        ranges.append((start, cut + 1))
        start = cut + 2
    ranges.append((start, inner_end))
    return ranges


def chunk(text: bytes, span: tuple[int, int]) -> bytes:
    """The events of `span` as a JSON array of their own."""
    return b"".join((b"[", memoryview(text)[span[0]:span[1]], b"]"))


def can_fork() -> bool:
    """Forking is safe here: POSIX fork exists (not macOS, whose system libraries may not survive a fork) and
    this process runs one thread (a lock held by another thread would never be released in the child)."""
    return hasattr(os, "fork") and sys.platform.startswith("linux") and threading.active_count() == 1


def fork_map(fn, items: list, workers: int) -> list:
    """[fn(x) for x in items], the items shared out over `workers` processes (this one and forked children,
    each running every workers-th item in order). An exception raised by fn in any process is raised here."""
    workers = max(1, min(workers, len(items)))
    if workers == 1:
        return [fn(x) for x in items]
    children = []
    for w in range(1, workers):
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute its share, send it, and leave without running the parent's exit code
            try:
                os.close(read_end)
                try:
                    payload = pickle.dumps((True, [fn(x) for x in items[w::workers]]), protocol=5)
                except BaseException as exc:  # noqa: BLE001 — handed to the parent, which raises it
                    payload = pickle.dumps((False, exc))
                with os.fdopen(write_end, "wb") as out:
                    out.write(payload)
            finally:
                os._exit(0)
        os.close(write_end)
        children.append((pid, read_end))
    results: list = [None] * len(items)
    error = None
    try:
        results[0::workers] = [fn(x) for x in items[0::workers]]
    except BaseException as exc:  # noqa: BLE001 — raised once the children are reaped
        error = exc
    for w, (pid, read_end) in enumerate(children, start=1):
        with os.fdopen(read_end, "rb") as src:
            payload = src.read()
        os.waitpid(pid, 0)
        try:
            ok, value = pickle.loads(payload)
        except Exception as exc:  # noqa: BLE001 — a child that died before answering
            ok, value = False, WorkerLost(f"a worker process (pid {pid}) ended without a result: {exc}")
        if not ok:
            error = error or value
        else:
            results[w::workers] = value
    if error is not None:
        raise error
    return results
