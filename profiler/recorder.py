"""Our own annotation recorder (no torch needed) and helpers that turn recorded spans into an events table."""

from __future__ import annotations

import os
import threading
import time

import numpy as np

from sagelaunch.profiler.schema import CAT_HOOK, CAT_MEMORY_SAMPLE, CAT_USER_ANNOTATION, RankTrace, TraceMeta

# perf_counter_ns is cheap and monotonic; this offset puts it on the epoch clock Kineto and the monitor use
_EPOCH_OFFSET_NS = time.time_ns() - time.perf_counter_ns()


def now_ns() -> int:
    return time.perf_counter_ns() + _EPOCH_OFFSET_NS


class AnnotationRecorder:
    """Appends (name, start, end, thread) of finished annotations, of the torch hooks' spans (optimizer steps,
    DataLoader batches: profiler/torch_hooks.py) and (name, ts, bytes) memory samples; thread-safe through the GIL
    (list.append)."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, int, int, int]] = []
        self.hook_spans: list[tuple[str, int, int, int]] = []
        self.samples: list[tuple[str, int, int]] = []

    def add(self, name: str, start_ns: int, end_ns: int) -> None:
        self.spans.append((name, start_ns, end_ns, threading.get_native_id()))

    def add_hook_span(self, name: str, start_ns: int, end_ns: int) -> None:
        self.hook_spans.append((name, start_ns, end_ns, threading.get_native_id()))

    def add_sample(self, name: str, ts_ns: int, value: int) -> None:
        self.samples.append((name, ts_ns, int(value)))

    def drain(self, meta: TraceMeta) -> RankTrace:
        spans, self.spans = self.spans, []
        hooks, self.hook_spans = self.hook_spans, []
        samples, self.samples = self.samples, []
        if not hooks and not samples:
            return spans_to_rank(spans, meta)
        parts = [spans_to_rank(spans, meta), spans_to_rank(hooks, meta, CAT_HOOK),
                 spans_to_rank([(n, t, t, 0) for n, t, _ in samples], meta, CAT_MEMORY_SAMPLE,
                               nbytes=[v for _, _, v in samples])]
        return concat_ranks([p for p in parts if len(p)], meta)


def spans_to_rank(spans: list[tuple[str, int, int, int]], meta: TraceMeta, cat: str = CAT_USER_ANNOTATION,
                  nbytes: list[int] | None = None) -> RankTrace:
    n = len(spans)
    names: dict[str, int] = {}
    name_id = np.array([names.setdefault(s[0], len(names)) for s in spans], dtype=np.int32)
    ts = np.array([s[1] for s in spans], dtype=np.int64)
    dur = np.array([s[2] - s[1] for s in spans], dtype=np.int64)
    tid = np.array([s[3] for s in spans], dtype=np.int64)
    order = np.argsort(ts, kind="stable")
    minus1 = np.full(n, -1, dtype=np.int64)
    cols = {
        "ts_ns": ts[order],
        "dur_ns": dur[order],
        "pid": np.full(n, os.getpid(), dtype=np.int64),
        "tid": tid[order],
        "device": np.full(n, -1, dtype=np.int16),
        "stream": minus1.copy(),
        "correlation": minus1.copy(),
        "external_id": minus1.copy(),
        "bytes": minus1.copy() if nbytes is None else np.array(nbytes, dtype=np.int64)[order],
        "name_id": name_id[order],
        "cat_id": np.zeros(n, dtype=np.int32),
        "dtype_id": np.zeros(n, dtype=np.int32),
    }
    return RankTrace(meta=meta, columns=cols, names=list(names), cats=[cat], dtypes=[""])


def concat_ranks(parts: list[RankTrace], meta: TraceMeta) -> RankTrace:
    """One table from several (dictionaries merged, rows re-sorted by time)."""
    names: dict[str, int] = {}
    cats: dict[str, int] = {}
    dtypes: dict[str, int] = {}
    cols: dict[str, list] = {}
    for part in parts:
        remap = {
            "name_id": np.array([names.setdefault(n, len(names)) for n in part.names] or [0], dtype=np.int32),
            "cat_id": np.array([cats.setdefault(c, len(cats)) for c in part.cats] or [0], dtype=np.int32),
            "dtype_id": np.array([dtypes.setdefault(d, len(dtypes)) for d in part.dtypes] or [0], dtype=np.int32),
        }
        for k, v in part.columns.items():
            cols.setdefault(k, []).append(remap[k][v] if k in remap else v)
    if not cols:
        return spans_to_rank([], meta)
    merged = {k: np.concatenate(v) for k, v in cols.items()}
    order = np.argsort(merged["ts_ns"], kind="stable")
    merged = {k: v[order] for k, v in merged.items()}
    return RankTrace(meta=meta, columns=merged, names=list(names), cats=list(cats) or [CAT_USER_ANNOTATION],
                     dtypes=list(dtypes) or [""])
