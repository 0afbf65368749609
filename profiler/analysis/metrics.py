"""Dashboard metrics of one rank, computed on exact nanosecond events (not HTA's rounded view)."""

from __future__ import annotations

import re

import numpy as np

from profiler.analysis.gpu_breakdown import merge_intervals
from profiler.nputil import distinct, percentile

from profiler.schema import (
    CAT_CPU_OP,
    CAT_CUDA_RUNTIME,
    CAT_CUDA_SYNC,
    CAT_GPU_MEMCPY,
    CAT_GPU_MEMSET,
    CAT_GPU_USER_ANNOTATION,
    CAT_KERNEL,
    CAT_USER_ANNOTATION,
    RankTrace,
)

STEP_NAME = re.compile(r"^(?:ProfilerStep#|step_)(\d+)$")
TIMELINE_BINS = 100

# Kernel name patterns, checked in this order; the first that matches decides the precision.
PRECISION_PATTERNS = (
    ("BF16", re.compile(r"bf16|bfloat16|BFloat16", re.I)),
    ("FP16", re.compile(r"fp16|__half|\bhalf\b|c10::Half|_f16|f16_|h884|h1688|h16816|hgemm", re.I)),
    ("TF32", re.compile(r"tf32|tensorop_s1688|s1688gemm|s16816gemm", re.I)),
    ("INT8", re.compile(r"int8|_i8|imma|signed char|qint8", re.I)),
    ("FP64", re.compile(r"double|dgemm|fp64", re.I)),
    ("FP32", re.compile(r"\bfloat\b|sgemm|fp32|_f32|f32_|s884|_s_", re.I)),
    ("INT32", re.compile(r"<int\b|\bint\b|int32|unsigned int", re.I)),
)
DTYPE_PRECISION = {
    "float": "FP32",
    "c10::Half": "FP16",
    "c10::BFloat16": "BF16",
    "double": "FP64",
    "int": "INT32",
    "long int": "INT64",
    "long": "INT64",
    "signed char": "INT8",
    "unsigned char": "INT8",
    "c10::qint8": "INT8",
    "bool": "BOOL",
}


def _us(ns) -> float:
    return float(ns) / 1000.0


def coverage_per_bin(s: np.ndarray, e: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Busy time of merged, sorted intervals [s, e) inside each bin between consecutive edges."""
    if len(s) == 0:
        return np.zeros(len(edges) - 1)
    cum = np.concatenate([[0], np.cumsum(e - s)])
    k = np.searchsorted(s, edges, side="right")
    over = np.where(k > 0, np.maximum(e[np.maximum(k - 1, 0)] - edges, 0), 0)
    return np.diff(cum[k] - over)


def _timeline(s, e, t0, t1, bins=TIMELINE_BINS) -> dict:
    # relative to t0: epoch nanoseconds (~1.7e18) are beyond float64's exact integers
    edges = np.linspace(0, t1 - t0, bins + 1)
    width = (t1 - t0) / bins if t1 > t0 else 1
    busy = coverage_per_bin((s - t0).astype(np.float64), (e - t0).astype(np.float64), edges)
    pct = np.clip(100 * busy / width, 0, 100)
    return {"t0_us": _us(t0), "bin_us": _us(width), "busy_pct": [round(float(x), 2) for x in pct]}


def _stats_us(d_ns: np.ndarray) -> dict:
    if len(d_ns) == 0:
        return {"count": 0}
    d = d_ns / 1000.0
    return {
        "count": int(len(d)),
        "total_us": float(d.sum()),
        "mean_us": float(d.mean()),
        "min_us": float(d.min()),
        "p50_us": percentile(d, 50),
        "p90_us": percentile(d, 90),
        "max_us": float(d.max()),
        "std_us": float(d.std()),
    }


def histogram(d_ns: np.ndarray, bins: int = 10) -> dict:
    counts, edges = np.histogram(d_ns / 1000.0, bins=bins)
    return {"edges_us": [float(x) for x in edges], "counts": [int(c) for c in counts]}


def kernels(rt: RankTrace, top_n: int) -> tuple[dict, list]:
    sel = rt.mask_cat(CAT_KERNEL)
    ids, dur = rt["name_id"][sel], rt["dur_ns"][sel]
    if not len(ids):
        return {"count": 0, "total_us": 0.0, "distinct": 0}, []
    uniq, inv = np.unique(ids, return_inverse=True)
    sums = np.bincount(inv, weights=dur)
    counts = np.bincount(inv)
    order = np.argsort(-sums)[:top_n]
    top = [
        {"name": rt.names[uniq[i]], "total_us": _us(sums[i]), "count": int(counts[i]), "mean_us": _us(sums[i] / counts[i])}
        for i in order
    ]
    return {"count": int(len(ids)), "total_us": _us(dur.sum()), "distinct": int(len(uniq))}, top


def precision(rt: RankTrace) -> dict[str, float]:
    sel = rt.mask_cat(CAT_KERNEL)
    if not sel.any():
        return {}
    by_name: dict[int, str] = {}
    for nid in distinct(rt["name_id"][sel]):
        name = rt.names[nid]
        by_name[int(nid)] = next((label for label, rx in PRECISION_PATTERNS if rx.search(name)), "")
    # kernels whose name says nothing: the dtype of the CPU op that launched them (same External id)
    cpu = rt.mask_cat(CAT_CPU_OP) & (rt["external_id"] >= 0) & (rt["dtype_id"] >= 0)
    ext_to_dtype = dict(zip(rt["external_id"][cpu].tolist(), rt["dtype_id"][cpu].tolist()))
    out: dict[str, float] = {}
    for nid, ext, dur in zip(rt["name_id"][sel].tolist(), rt["external_id"][sel].tolist(), rt["dur_ns"][sel].tolist()):
        label = by_name[nid]
        if not label:
            dt = ext_to_dtype.get(ext)
            label = DTYPE_PRECISION.get(rt.dtypes[dt], "unknown") if dt is not None else "unknown"
        out[label] = out.get(label, 0.0) + dur / 1000.0
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def gpu_activity(rt: RankTrace) -> dict:
    out = {}
    for label, cat in (("kernel", CAT_KERNEL), ("memcpy", CAT_GPU_MEMCPY), ("memset", CAT_GPU_MEMSET), ("sync", CAT_CUDA_SYNC)):
        sel = rt.mask_cat(cat)
        if sel.any():
            out[label] = {"us": _us(rt["dur_ns"][sel].sum()), "count": int(sel.sum())}
    return out


def memory_ops(rt: RankTrace) -> dict:
    sel = rt.mask_cat(CAT_GPU_MEMCPY, CAT_GPU_MEMSET)
    out: dict[str, dict] = {}
    for nid, dur, nbytes in zip(rt["name_id"][sel].tolist(), rt["dur_ns"][sel].tolist(), rt["bytes"][sel].tolist()):
        name = rt.names[nid]
        m = re.match(r"Memcpy (\w+)", name)
        label = "memset" if name.startswith("Memset") else (m.group(1) if m else "other")
        d = out.setdefault(label, {"us": 0.0, "count": 0, "bytes": 0})
        d["us"] += dur / 1000.0
        d["count"] += 1
        d["bytes"] += max(nbytes, 0)
    return out


def steps(rt: RankTrace) -> dict | None:
    sel = rt.mask_cat(CAT_USER_ANNOTATION)
    step_ids = np.array([bool(STEP_NAME.match(n)) for n in rt.names], dtype=bool)
    if not len(step_ids):
        return None
    sel &= step_ids[rt["name_id"]]
    if not sel.any():
        return None
    nums = [int(STEP_NAME.match(rt.names[i]).group(1)) for i in rt["name_id"][sel].tolist()]
    d = rt["dur_ns"][sel]
    return {
        **_stats_us(d),
        "steps": [{"step": n, "ts_us": _us(t), "dur_us": _us(x)} for n, t, x in zip(nums, rt["ts_ns"][sel].tolist(), d.tolist())],
        "histogram": histogram(d),
    }


def annotations(rt: RankTrace, top_n: int = 20) -> list[dict]:
    sel = rt.mask_cat(CAT_USER_ANNOTATION, CAT_GPU_USER_ANNOTATION)
    ids, dur = rt["name_id"][sel], rt["dur_ns"][sel]
    if not len(ids):
        return []
    uniq, inv = np.unique(ids, return_inverse=True)
    sums = np.bincount(inv, weights=dur)
    out = []
    for i in np.argsort(-sums)[:top_n]:
        d = dur[inv == i]
        out.append({"name": rt.names[uniq[i]], **_stats_us(d), "histogram": histogram(d)})
    return out


def cpu_activity(rt: RankTrace) -> dict | None:
    sel = rt.mask_cat(CAT_CPU_OP, CAT_USER_ANNOTATION, CAT_CUDA_RUNTIME, "cuda_driver", "python_function")
    if not sel.any():
        return None
    ts, end = rt["ts_ns"][sel], rt["ts_ns"][sel] + rt["dur_ns"][sel]
    s, e = merge_intervals(ts, end)
    t0, t1 = int(s[0]), int(e.max())
    return {
        "active_us": _us((e - s).sum()),
        "span_us": _us(t1 - t0),
        "threads": int(len(distinct(rt["tid"][sel]))),
        "utilization": _timeline(s, e, t0, t1),
    }


def gpu_timeline(rt: RankTrace) -> dict:
    """Per device: busy percent of kernels/memcpy/memset per time bin (GPU utilisation over time)."""
    sel = rt.mask_cat(CAT_KERNEL, CAT_GPU_MEMCPY, CAT_GPU_MEMSET)
    if not sel.any():
        return {}
    ts, end, dev = rt["ts_ns"][sel], rt["ts_ns"][sel] + rt["dur_ns"][sel], rt["device"][sel]
    t0, t1 = int(ts.min()), int(end.max())
    out = {}
    for d in distinct(dev).tolist():
        m = dev == d
        s, e = merge_intervals(ts[m], end[m])
        out[str(d)] = _timeline(s, e, t0, t1)
    return out
