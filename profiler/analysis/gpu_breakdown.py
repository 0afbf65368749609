"""GPU temporal breakdown, kernel-type breakdown and launch statistics with HTA 0.5's definitions.

- temporal (``get_temporal_breakdown``): span = end of the last GPU event - start of the first; idle = span -
  union of all GPU events; compute = union of COMPUTATION kernels; non-compute = span - compute - idle.
- kernel types (``get_gpu_kernel_breakdown(include_memory_kernels=True)``): the union of each type's events,
  then a sweep over the three unions labels every instant by the set of types running ("COMPUTATION",
  "COMMUNICATION overlapping MEMORY", …) exactly as HTA's running-bitmask does.
- launch (``get_cuda_kernel_launch_stats``): CPU runtime calls cudaLaunchKernel/cudaLaunchKernelExC/
  cudaMemcpyAsync/cudaMemsetAsync joined with GPU events on correlation; delay = max(0, gpu.ts - cpu.end).
  We also accept the HIP spellings (hipLaunchKernel, …) so that ROCm traces get launch statistics; HTA has none.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np

from sagelaunch.profiler.analysis.hta_view import HtaView
from sagelaunch.profiler.nputil import distinct, isin, percentile

COMPUTATION, COMMUNICATION, MEMORY, OTHER = "COMPUTATION", "COMMUNICATION", "MEMORY", "OTHER"
SWEEP_TYPES = (COMPUTATION, COMMUNICATION, MEMORY)  # HTA's order: bit 1, 2, 4

_NCCL = re.compile(r"^nccl.*Kernel")
_MEMORY = re.compile(r"(^Memcpy)|(^Memset)|(^dma)")
_NOT_COMPUTE = re.compile(r"(^nccl.*Kernel)|(.*(Memcpy)|(Memset))|(.*Sync)")

CUDA_LAUNCH = ("cudaLaunchKernel", "cudaLaunchKernelExC", "runFunction - job_prep_and_submit_for_execution")
CUDA_MEMORY_LAUNCH = ("cudaMemcpyAsync", "cudaMemsetAsync")
HIP_LAUNCH = ("hipLaunchKernel", "hipExtLaunchKernel", "hipModuleLaunchKernel", "hipMemcpyAsync", "hipMemsetAsync")


# per name, once per process: a worker of a many-rank folder meets the same names in every rank it reads
@lru_cache(maxsize=1 << 16)
def kernel_type(name: str) -> str:
    if _NCCL.match(name):
        return COMMUNICATION
    if _MEMORY.match(name):
        return MEMORY
    if not _NOT_COMPUTE.match(name):
        return COMPUTATION
    return OTHER


def kernel_types_of(names: list[str]) -> np.ndarray:
    """Kernel type label per dictionary entry (object array indexed by name_id)."""
    return np.array([kernel_type(n) for n in names], dtype=object)


def merge_intervals(ts: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Union of intervals, as HTA's merge_kernel_intervals (a new group starts after the running max end).

    Sorted with numpy's quicksort like pandas' sort_values: with HTA's rounding some intervals have end < start,
    and then the order of equal starts changes the groups, so we sort exactly as HTA does.
    """
    if len(ts) == 0:
        return ts, end
    order = np.argsort(ts, kind="quicksort")
    ts, end = ts[order], end[order]
    new_group = np.empty(len(ts), dtype=bool)
    new_group[0] = True
    new_group[1:] = ts[1:] > np.maximum.accumulate(end)[:-1]
    starts = np.flatnonzero(new_group)
    return ts[starts], np.maximum.reduceat(end, starts)


def temporal(gpu: HtaView, types: np.ndarray) -> dict | None:
    if len(gpu.ts) == 0:
        return None
    # HTA sorts the GPU frame in place for the idle time, then selects compute kernels from the sorted frame
    order = np.argsort(gpu.ts, kind="quicksort")
    g_ts, g_end, g_name = gpu.ts[order], gpu.end[order], gpu.name_id[order]
    m_ts, m_end = merge_intervals(g_ts, g_end)
    span = float(m_end[-1] - m_ts[0])
    busy = float(m_end.sum() - m_ts.sum())
    comp = types[g_name] == COMPUTATION
    c_ts, c_end = merge_intervals(g_ts[comp], g_end[comp])
    compute = float(c_end.sum() - c_ts.sum())
    idle = span - busy
    return {
        "idle_us": idle,
        "compute_us": compute,
        "non_compute_us": span - compute - idle,
        "span_us": span,
        "idle_pct": round(100 * idle / span, 2) if span else 0.0,
        "compute_pct": round(100 * compute / span, 2) if span else 0.0,
        "non_compute_pct": round(100 * (span - compute - idle) / span, 2) if span else 0.0,
    }


def covered_upto(s: np.ndarray, e: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Busy time of merged, sorted intervals [s, e) before each x (all x at once, any order)."""
    if not len(s):
        return np.zeros(len(xs))
    cum = np.concatenate([[0], np.cumsum(e - s)])
    k = np.searchsorted(s, xs, side="right")  # intervals starting at or before x
    over = np.where(k > 0, np.maximum(e[np.maximum(k - 1, 0)] - xs, 0), 0)  # the part of the last one after x
    return cum[k] - over


def comm_comp_overlap(gpu: HtaView, types: np.ndarray) -> dict | None:
    """HTA's get_comm_comp_overlap: the share of (merged) communication time during which a computation kernel runs;
    None without communication kernels."""
    comm, comp = types[gpu.name_id] == COMMUNICATION, types[gpu.name_id] == COMPUTATION
    if not comm.any():
        return None
    m_s, m_e = merge_intervals(gpu.ts[comm], gpu.end[comm])
    c_s, c_e = merge_intervals(gpu.ts[comp], gpu.end[comp])
    total = float((m_e - m_s).sum())
    both = float((covered_upto(c_s, c_e, m_e) - covered_upto(c_s, c_e, m_s)).sum()) if len(c_s) else 0.0
    top = np.bincount(gpu.name_id[comm], weights=gpu.dur[comm])  # the communication kernel with the most time
    return {"communication_us": total, "overlapped_us": both,
            "comp_comm_overlap_pct": round(100 * both / total, 2) if total else 0.0,
            "top_kernel": gpu.names[int(np.argmax(top))]}


def kernel_type_breakdown(gpu: HtaView, types: np.ndarray) -> dict[str, float]:
    times, deltas = [], []
    per_event = types[gpu.name_id]
    for bit, ktype in enumerate(SWEEP_TYPES):
        sel = per_event == ktype
        m_ts, m_end = merge_intervals(gpu.ts[sel], gpu.end[sel])
        times += [m_ts, m_end]
        deltas += [np.full(len(m_ts), 1 << bit), np.full(len(m_end), -(1 << bit))]
    if not times:
        return {}
    t = np.concatenate(times)
    d = np.concatenate(deltas)
    order = np.argsort(t, kind="stable")
    t, d = t[order], d[order]
    running = np.cumsum(d)
    seg = np.trunc(np.diff(t))  # HTA: (next_time - time).astype(int)
    running = running[:-1]
    out: dict[str, float] = {}
    for value in distinct(running[running > 0]):
        label = " overlapping ".join(k for b, k in enumerate(SWEEP_TYPES) if int(value) & (1 << b))
        out[label] = out.get(label, 0.0) + float(seg[running == value].sum())
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def _join_on_correlation(cpu_idx: np.ndarray, gpu_idx: np.ndarray, corr: np.ndarray):
    """Inner join (all pairs) of two row sets on correlation; returns (cpu rows, gpu rows)."""
    c_order = cpu_idx[np.argsort(corr[cpu_idx], kind="stable")]
    c_keys = corr[c_order]
    lo = np.searchsorted(c_keys, corr[gpu_idx], side="left")
    hi = np.searchsorted(c_keys, corr[gpu_idx], side="right")
    n = hi - lo
    g = np.repeat(gpu_idx, n)
    offsets = np.repeat(lo - np.concatenate([[0], np.cumsum(n)[:-1]]), n) + np.arange(n.sum())
    return c_order[offsets], g


def launch_stats(view: HtaView, per_kernel_top: int = 10) -> dict:
    names = view.names
    launch_names = set(CUDA_LAUNCH + CUDA_MEMORY_LAUNCH + HIP_LAUNCH)
    is_launch_name = np.array([n in launch_names for n in names], dtype=bool)
    launch_rows = is_launch_name[view.name_id] if len(names) else np.zeros(0, bool)
    corr_set = distinct(view.correlation[launch_rows])
    corr_set = corr_set[corr_set >= 0]  # no correlation id: nothing to link (HTA would cross-join all -1s)
    in_set = isin(view.correlation, corr_set)
    cpu_idx = np.flatnonzero(in_set & (view.stream == -1))
    gpu_idx = np.flatnonzero(in_set & (view.stream != -1))
    c, g = _join_on_correlation(cpu_idx, gpu_idx, view.correlation)
    delay = np.clip(view.ts[g] - view.ts[c] - view.dur[c], 0, None)
    out: dict[str, Any] = {
        "count": int(len(delay)),
        "mean_launch_delay_us": float(delay.mean()) if len(delay) else None,
        "p50_launch_delay_us": percentile(delay, 50) if len(delay) else None,
        "p95_launch_delay_us": percentile(delay, 95) if len(delay) else None,
        "max_launch_delay_us": float(delay.max()) if len(delay) else None,
        "mean_cpu_launch_us": float(view.dur[c].mean()) if len(c) else None,
        "runtime_outliers": int((view.dur[c] > 50).sum()),  # HTA's runtime_cutoff (µs)
        "delay_outliers": int((delay > 100).sum()),  # HTA's launch_delay_cutoff (µs)
        "per_kernel": [],
    }
    if len(delay):
        kid = view.name_id[g]
        uniq, inv = np.unique(kid, return_inverse=True)
        counts = np.bincount(inv)
        sums = np.bincount(inv, weights=delay)
        maxes = np.zeros(len(uniq))
        np.maximum.at(maxes, inv, delay)
        order = np.argsort(-sums)[:per_kernel_top]
        out["per_kernel"] = [
            {
                "name": names[uniq[i]],
                "count": int(counts[i]),
                "mean_launch_delay_us": float(sums[i] / counts[i]),
                "max_launch_delay_us": float(maxes[i]),
            }
            for i in order
        ]
    return out


# the runtime calls HTA's queue length counts (TraceSymbolTable.get_runtime_launch_events_query)
QUEUE_LAUNCH = ("cudaMemsetAsync", "cudaMemcpyAsync", "cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel",
                "runFunction - job_prep_and_submit_for_execution", "hipLaunchKernel", "hipExtModuleLaunchKernel",
                "hipMemcpyAsync", "hipMemsetAsync", "hipMemcpyWithStream")


def queue_length(view: HtaView) -> dict | None:
    """HTA's queue length (TraceCounters.get_queue_length_time_series, …_summary): +1 at each runtime launch that has
    a GPU event, -1 when that event starts, counted per stream in one time order of all of them (HTA's one sort);
    the series' points summarised per stream and over all (mean, max, count of points). None without launches."""
    is_launch = np.array([n in QUEUE_LAUNCH for n in view.names] or [False], dtype=bool)
    gpu = view.stream != -1
    launch = np.flatnonzero(~gpu & is_launch[view.name_id] & isin(view.correlation, view.correlation[gpu])
                            & (view.correlation >= 0))
    if not len(launch):
        return None
    kernels = np.flatnonzero(gpu & isin(view.correlation, view.correlation[launch]))
    by_corr = kernels[np.argsort(view.correlation[kernels], kind="stable")]
    pos = np.minimum(np.searchsorted(view.correlation[by_corr], view.correlation[launch]), len(by_corr) - 1)
    stream = np.concatenate([view.stream[by_corr[pos]], view.stream[kernels]])  # a launch counts on its kernel's stream
    ts = np.concatenate([view.ts[launch], view.ts[kernels]])
    step = np.concatenate([np.ones(len(launch)), -np.ones(len(kernels))])
    order = np.argsort(ts, kind="quicksort")  # as pandas' sort_values, ties included
    stream, step = stream[order], step[order]
    streams: dict[str, dict] = {}
    total, points, top = 0.0, 0, 0
    for st in distinct(stream).tolist():
        q = np.cumsum(step[stream == st])
        streams[str(st)] = {"mean": float(q.mean()), "max": int(q.max()), "count": int(len(q))}
        total, points, top = total + float(q.sum()), points + len(q), max(top, int(q.max()))
    return {"mean": total / points, "max": top, "streams": streams}


CONSECUTIVE_KERNEL_DELAY_US = 30  # HTA 0.5's default consecutive_kernel_delay
IDLE_KERNEL_CATS = ("kernel", "Kernel", "gpu_memset", "Memset", "gpu_memcpy", "Memcpy", "mtia_ccp_events")


def idle_time_breakdown(view: HtaView, consecutive_kernel_delay: float = CONSECUTIVE_KERNEL_DELAY_US) -> dict | None:
    """HTA's get_idle_time_breakdown: per stream, the gap before each GPU event (its start minus the previous event's
    end, in start order) is host wait when the runtime call that launched it began after that end (the host was late),
    kernel wait when it is shorter than ``consecutive_kernel_delay`` (launch overhead between back-to-back kernels),
    other otherwise (synchronisation, waits on other streams). µs; None without GPU events."""
    kernel_cats = np.array([c in IDLE_KERNEL_CATS for c in view.cats or []] or [False], dtype=np.bool_)
    gpu = (view.stream != -1) & kernel_cats[view.cat_id]  # kernels, memcpy, memset: not syncs, not annotations
    if not gpu.any():
        return None
    cpu = np.flatnonzero((view.stream == -1) & (view.correlation >= 0))
    first = cpu[np.unique(view.correlation[cpu], return_index=True)[1]]  # one runtime call per correlation
    keys = view.correlation[first]
    streams: dict[str, dict] = {}
    totals = {"host_wait_us": 0.0, "kernel_wait_us": 0.0, "other_us": 0.0}
    for st in distinct(view.stream[gpu]).tolist():
        rows = np.flatnonzero(gpu & (view.stream == st))
        rows = rows[np.argsort(view.ts[rows], kind="quicksort")]  # pandas' sort_values, as HTA sorts
        ts, end, corr = view.ts[rows], view.end[rows], view.correlation[rows]
        gap, prev_end = ts[1:] - end[:-1], end[:-1]
        pos = np.minimum(np.searchsorted(keys, corr[1:]), max(len(keys) - 1, 0))
        linked = (keys[pos] == corr[1:]) if len(keys) else np.zeros(len(gap), dtype=bool)
        runtime_ts = np.where(linked, view.ts[first[pos]] if len(keys) else 0.0, -np.inf)
        host = runtime_ts > prev_end
        kernel = ~host & (gap < consecutive_kernel_delay)
        other = ~host & ~kernel
        row = {"host_wait_us": float(gap[host].sum()), "kernel_wait_us": float(gap[kernel].sum()),
               "other_us": float(gap[other].sum())}
        streams[str(st)] = row
        for k, v in row.items():
            totals[k] += v
    return {**totals, "streams": streams}
