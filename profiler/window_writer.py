"""Hands finished capture windows to the profile's output on a writer thread, so the training thread only stops
Kineto.

A window is handed over as our annotation spans plus, when Kineto recorded, the stopped torch.profiler session;
the writer lets torch export Kineto's events and passes them, with the spans, to the profile's output (the helper
process of profiler/output_process.py), which reads and merges them and writes ``rank-<R>/trace-<seq>.parquet``.
At most one window waits while another is written (the queue holds one): a training thread that rotates faster
than windows can be written waits for that one, so memory stays bounded by two windows. A failure
is logged once and stops profiling (training goes on).
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

from sagelaunch.profiler.recorder import now_ns

log = logging.getLogger("sagelaunch.profiler")
_DONE = object()


class WindowWriter:
    def __init__(self, files: list[Path], output, on_fail) -> None:
        self.files = files  # the session's list of written files (appended here, read after close())
        self._seq = len(files)
        self._output = output  # a ProfileOutput
        self._on_fail = on_fail
        self._failed = False
        self._queue: queue.Queue = queue.Queue(maxsize=1)
        self._busy: list[list[int]] = []  # when this thread converted windows, for the next file's metadata
        self._thread = threading.Thread(target=self._run, name="sagelaunch-profiler-writer", daemon=True)
        self._thread.start()

    def submit(self, rank_dir: Path, meta, spans, finished) -> None:
        """Queue one window (blocks while a window already waits); dropped after a failure."""
        if self._failed:
            if finished is not None:
                finished.discard()
            return
        self._queue.put((rank_dir, meta, spans, finished))

    def close(self) -> None:
        """Write what is queued, then end the thread."""
        if self._thread.is_alive():
            self._queue.put(_DONE)
            self._thread.join()

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _DONE:
                return
            if self._failed:
                continue
            start = now_ns()
            try:
                self._write(*item)
                self._busy.append([start, now_ns()])
            except Exception:  # noqa: BLE001 — never fail the training job
                log.exception("profiler: writing a trace window failed; profiling stops, training goes on")
                self._failed = True
                self._on_fail()

    def _write(self, rank_dir: Path, meta, spans, finished) -> None:
        kineto_json = finished.export() if finished is not None else None
        meta.profiler_busy_ns, self._busy = self._busy, []  # the spans since the previous file
        # the first window is written even when empty: the rank exists
        path = self._output.write_window(rank_dir / f"trace-{self._seq:04d}.parquet", meta, spans, kineto_json,
                                         not self.files)
        if path is not None:
            self.files.append(path)
            self._seq += 1
