"""Profiling cycles: torch.profiler's tensorboard_trace_handler writes one trace file per cycle of its schedule
(``schedule(..., repeat=N)``), each named ``<worker>.<time>.pt.trace.json[.gz]`` and saying the same rank (its
``distributedInfo``, or none: rank 0). Such files are one rank read in pieces, not ranks of their own: they come from
one process (the same host process id on their operators) and do not overlap in time. The loader joins them
(profiler/loader.py); the loop does not count the pause between two cycles as a step's (analysis/loop.py)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import numpy as np

from sagelaunch.profiler.schema import RankTrace

# tensorboard_trace_handler's file name: the worker (hostname_pid by default), then the cycle's time
HANDLER_FILE = re.compile(r"^(?P<worker>.+)\.\d+\.pt\.trace\.json(\.gz)?$")


def worker_of(path: Path) -> str | None:
    """The worker name tensorboard_trace_handler put in a file's name, None for other names."""
    m = HANDLER_FILE.match(path.name)
    return m.group("worker") if m else None


def has_cycles(files: list[Path]) -> bool:
    """Two or more files of one worker: profiling cycles of one process."""
    workers = [w for w in map(worker_of, files) if w is not None]
    return len(workers) != len(set(workers))


def _host_pid(rt: RankTrace) -> int | None:
    host = rt["device"] < 0
    pids = rt["pid"][host]
    if not len(pids):
        return None
    values, counts = np.unique(pids, return_counts=True)
    return int(values[np.argmax(counts)])


def _span(rt: RankTrace) -> tuple[int, int]:
    ts = rt["ts_ns"]
    return int(ts.min()), int((ts + rt["dur_ns"]).max())


def same_process(a, b) -> bool:
    """Two traces of one rank that are cycles of one process: Kineto traces, the same host process, no overlap."""
    if not (isinstance(a, RankTrace) and isinstance(b, RankTrace)) or a.meta.kind != "kineto" or b.meta.kind != "kineto":
        return False
    if not len(a) or not len(b) or _host_pid(a) is None or _host_pid(a) != _host_pid(b):
        return False
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return a1 <= b0 or b1 <= a0


def _codes(values: list[str], into: list[str], index: dict[str, int]) -> np.ndarray:
    for v in values:
        if v not in index:
            index[v] = len(into)
            into.append(v)
    return np.array([index[v] for v in values] or [0], dtype=np.int32)


def join_cycles(a: RankTrace, b: RankTrace) -> RankTrace:
    """One rank from two cycles' traces: their events in time order, the names re-coded, each cycle's span kept in
    meta.cycles_ns."""
    first, second = sorted((a, b), key=lambda rt: _span(rt)[0])
    tables: dict[str, list[str]] = {"name": [], "cat": [], "dtype": []}
    parts: list[dict] = []
    for rt in (first, second):
        cols = dict(rt.columns)
        for key, values in (("name", rt.names), ("cat", rt.cats), ("dtype", rt.dtypes)):
            index = {v: i for i, v in enumerate(tables[key])}
            cols[f"{key}_id"] = _codes(values, tables[key], index)[rt.columns[f"{key}_id"]]
        parts.append(cols)
    columns = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    order = np.argsort(columns["ts_ns"], kind="stable")
    columns = {k: v[order] for k, v in columns.items()}
    meta = replace(first.meta)
    meta.cycles_ns = (first.meta.cycles_ns or [list(_span(first))]) + (second.meta.cycles_ns or [list(_span(second))])
    meta.source = f"{first.meta.source}, {second.meta.source}"
    meta.warnings = first.meta.warnings + second.meta.warnings
    return RankTrace(meta=meta, columns=columns, names=tables["name"], cats=tables["cat"], dtypes=tables["dtype"])
