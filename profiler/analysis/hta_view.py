"""The rows HTA 0.5 analyses, reproduced with numpy so that our numbers match Holistic Trace Analysis.

HTA (``TraceAnalysis`` load) does, per rank:
1. keeps events with a duration and a category (not "Trace");
2. when timestamps are fractional microseconds: start = ceil(ts), end = floor(ts + dur), dur = end - start
   (pytorch#122425: ns traces have overlapping events);
3. when the traces hold at least two distinct ``ProfilerStep#N`` names, drops the last step: CPU events from the
   start of the last ProfilerStep on, and GPU events whose correlation does not match a remaining CPU event
   (an inner join: a correlation shared by k CPU events repeats the GPU event k times, as pandas' merge does);
4. calls an event a GPU event when its ``stream`` arg is an integer other than -1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sagelaunch.profiler.schema import RankTrace

SYNC_ON_DEVICE = ("Event Sync", "Context Sync")


@dataclass
class HtaView:
    """Columns (µs as float64, like HTA) of the rows HTA keeps for one rank."""

    name_id: np.ndarray
    ts: np.ndarray
    dur: np.ndarray
    stream: np.ndarray
    correlation: np.ndarray
    names: list[str]
    cat_id: np.ndarray | None = None  # category codes into `cats` (None: not carried)
    cats: list[str] | None = None

    @property
    def end(self) -> np.ndarray:
        return self.ts + self.dur

    def take(self, idx) -> "HtaView":
        return HtaView(
            self.name_id[idx], self.ts[idx], self.dur[idx], self.stream[idx], self.correlation[idx], self.names,
            None if self.cat_id is None else self.cat_id[idx], self.cats,
        )

    def gpu(self) -> "HtaView":
        return self.take(self.stream != -1)


def _name_mask(rt: RankTrace, pred) -> np.ndarray:
    """Boolean per dictionary entry, indexed by name_id."""
    return np.fromiter((bool(pred(n)) for n in rt.names), dtype=bool, count=len(rt.names))


def build(rt: RankTrace, n_step_names: int, include_last_step: bool = False) -> HtaView:
    c = rt.columns
    if rt.source_order is not None:  # HTA works in file order; its unstable sorts make tie order matter
        c = {k: c[k][rt.source_order] for k in ("ts_ns", "dur_ns", "name_id", "stream", "correlation", "cat_id")}
    if rt.meta.base_ns:  # HTA rounds the µs values as written in the file, i.e. before adding the base
        c = {**c, "ts_ns": c["ts_ns"] - rt.meta.base_ns}
    if rt.meta.float_us:
        # rebuild the float64 µs values the JSON held (whole + fraction, so nothing is lost above 2**53 ns)
        ts_f = (c["ts_ns"] // 1000).astype(np.float64) + (c["ts_ns"] % 1000) / 1000.0
        dur_f = c["dur_ns"] / 1000.0
        ts_us = np.ceil(ts_f)
        dur_us = np.floor(ts_f + dur_f) - ts_us
    else:  # integer µs in the source: exact as float64 when split (ns values are beyond 2**53)
        ts_us = (c["ts_ns"] // 1000).astype(np.float64) + (c["ts_ns"] % 1000) / 1000.0
        dur_us = c["dur_ns"] / 1000.0
    if len(ts_us):  # HTA aligns traces to start at 0; sums of absolute µs (~1e15) would lose precision
        ts_us = ts_us - ts_us.min()
    view = HtaView(c["name_id"], ts_us, dur_us, c["stream"].astype(np.int64), c["correlation"], rt.names, c["cat_id"],
                   rt.cats)
    if n_step_names < 2 or len(view.ts) == 0:
        return view
    sync_names = _name_mask(rt, lambda n: n in SYNC_ON_DEVICE)
    is_gpu = ((view.stream >= 0) & (view.correlation >= 0)) | sync_names[view.name_id]
    step_names = _name_mask(rt, lambda n: "ProfilerStep" in n)
    steps = ~is_gpu & step_names[view.name_id]
    if not steps.any():  # HTA compares with NaN here and keeps no CPU event at all
        cpu_keep = np.zeros(len(view.ts), dtype=bool)
    elif include_last_step:
        cpu_keep = ~is_gpu & (view.ts <= view.end[steps].max())
    else:
        cpu_keep = ~is_gpu & (view.ts < view.ts[steps].max())
    # inner join of GPU rows with the kept CPU rows on correlation: repeat each GPU row by its match count
    corr_vals, corr_counts = np.unique(view.correlation[cpu_keep], return_counts=True)
    gpu_idx = np.flatnonzero(is_gpu)
    pos = np.searchsorted(corr_vals, view.correlation[gpu_idx])
    pos_ok = np.minimum(pos, max(len(corr_vals) - 1, 0))
    hit = (pos < len(corr_vals)) & (corr_vals[pos_ok] == view.correlation[gpu_idx]) if len(corr_vals) else np.zeros(
        len(gpu_idx), dtype=bool
    )
    reps = np.where(hit, corr_counts[pos_ok] if len(corr_vals) else 0, 0)
    keep_gpu = np.repeat(gpu_idx, reps)
    return view.take(np.concatenate([keep_gpu, np.flatnonzero(cpu_keep)]))
