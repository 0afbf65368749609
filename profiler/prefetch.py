"""Read and gunzip a trace in a background thread while the analysis imports numpy & co.

ISA-L (like zlib) releases the GIL, so the ~10-50 ms of decompressing a large trace overlaps with the imports; this module
imports nothing heavy on purpose.
"""

from __future__ import annotations

import threading
from pathlib import Path

from sagelaunch.profiler.trace_file import ProfileLoadError, read_trace_bytes

_results: dict[str, object] = {}
_threads: dict[str, threading.Thread] = {}


def _work(key: str, path: Path) -> None:
    try:
        _results[key] = read_trace_bytes(path)
    except ProfileLoadError as exc:  # raised to the reader when it takes the bytes
        _results[key] = exc


def start(path) -> None:
    from sagelaunch.profiler import trace_cache

    p = Path(path)
    if p.is_file() and p.name.endswith((".json", ".json.gz")) and trace_cache.cached(p) is None:
        key = str(p.resolve())
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
