"""Read and gunzip a trace in a background thread while the analysis imports numpy & co.

zlib releases the GIL, so the ~50-100 ms of decompressing a large trace overlaps with the imports; this module
imports nothing heavy on purpose.
"""

from __future__ import annotations

import gzip
import threading
import zlib
from pathlib import Path

_results: dict[str, object] = {}
_threads: dict[str, threading.Thread] = {}


def _work(key: str, path: Path) -> None:
    try:
        raw = path.read_bytes()
        _results[key] = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
    except (OSError, EOFError, zlib.error) as exc:  # the reader reports it properly later
        _results[key] = exc


def start(path) -> None:
    p = Path(path)
    if p.is_file() and p.name.endswith((".json", ".json.gz")):
        key = str(p.resolve())
        _threads[key] = threading.Thread(target=_work, args=(key, p), daemon=True)
        _threads[key].start()


def take(path: Path) -> bytes | None:
    """The prefetched bytes of `path` (once), or None when it was not prefetched or failed."""
    key = str(path.resolve())
    thread = _threads.pop(key, None)
    if thread is None:
        return None
    thread.join()
    result = _results.pop(key, None)
    return result if isinstance(result, bytes) else None
