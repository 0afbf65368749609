"""Dashboard metrics of one rank, computed on exact nanosecond events (not HTA's rounded view)."""

from __future__ import annotations

import re
from functools import lru_cache

import numpy as np

from sagelaunch.jobspec.errors import SagelaunchRuntimeError
from sagelaunch.profiler.analysis.gpu_breakdown import COMMUNICATION, covered_upto, kernel_type, merge_intervals
from sagelaunch.profiler.nputil import auto_bin_count, distinct, percentile
from sagelaunch.profiler.schema import (
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


def step_number(name: str) -> int:
    """The number of a step annotation's name (ProfilerStep#N, step_N); callers pass only names STEP_NAME matches."""
    match = STEP_NAME.match(name)
    if match is None:
        raise SagelaunchRuntimeError(f"{name!r} is not a step annotation's name")
    return int(match.group(1))
TIMELINE_BINS = 100

# Kernel name patterns, checked in this order; the first that matches decides the precision. Communication
# kernels (NCCL/RCCL) come first: "…Sum_int8_t" names the reduction's element type, not a compute precision.
COMMUNICATION_PRECISION = "communication"
PRECISION_PATTERNS = (
    ("BF16", re.compile(r"bf16|bfloat16|BFloat16", re.I)),
    ("FP16", re.compile(r"fp16|__half|\bhalf\b|c10::Half|_f16|f16_|h884|h1688|h16816|hgemm|hcudnn", re.I)),
    ("TF32", re.compile(r"tf32|tensorop_s1688|s1688gemm|s16816gemm", re.I)),
    ("INT8", re.compile(r"int8|_i8|imma|signed char|qint8", re.I)),
    ("FP64", re.compile(r"double|dgemm|fp64", re.I)),
    ("FP32", re.compile(r"\bfloat\b|sgemm|fp32|_f32|f32_|s884|_s_|scudnn", re.I)),
    ("INT32", re.compile(r"<int\b|\bint\b|int32|unsigned int", re.I)),
)
# The same patterns lower-cased, without re.I, for ASCII names lower-cased: the same matches (ASCII case folding is
# one-to-one, and \b does not depend on case) at a third of the cost (re.I alternations on ~330-character kernel
# names were ~20 µs a search). Non-ASCII names use the originals (re.I also folds e.g. "ſ" to "s").
_ASCII_PRECISION_PATTERNS = tuple((label, re.compile(rx.pattern.lower())) for label, rx in PRECISION_PATTERNS)
assert not any(re.search(r"\\[A-Z]", rx.pattern) for _, rx in PRECISION_PATTERNS), "lower() would change \\W, \\B…"


@lru_cache(maxsize=1 << 16)  # per name, once per process (see gpu_breakdown.kernel_type)
def name_precision(name: str) -> str:
    """The first precision label whose pattern matches the kernel name, or ""."""
    if name.isascii():
        low = name.lower()
        return next((label for label, rx in _ASCII_PRECISION_PATTERNS if rx.search(low)), "")
    return next((label for label, rx in PRECISION_PATTERNS if rx.search(name)), "")


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
    return np.diff(covered_upto(s, e, edges))


def _timeline(s, e, t0, t1, bins=TIMELINE_BINS) -> dict:
    # relative to t0: epoch nanoseconds (~1.7e18) are beyond float64's exact integers
    edges = np.linspace(0, t1 - t0, bins + 1)
    width = (t1 - t0) / bins if t1 > t0 else 1
    busy = coverage_per_bin((s - t0).astype(np.float64), (e - t0).astype(np.float64), edges)
    pct = np.clip(100 * busy / width, 0, 100)
    return {"t0_us": _us(t0), "bin_us": _us(width), "busy_pct": [round(float(x), 2) for x in pct]}


def _stats_us(d_ns: np.ndarray) -> dict:
    """Statistics (µs) of at least one duration (ns): the callers' spans, never empty (records.Durations)."""
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


MAX_HIST_BINS = 40


def histogram(d_ns: np.ndarray, bins: int | None = None) -> dict:
    """Counts per bin of durations (µs). Bins: numpy's "auto" rule (the larger of Sturges and
    Freedman-Diaconis), at most MAX_HIST_BINS, on "nice" edges (1/2/5 × 10^k µs) so labels read well;
    one bin when every value is the same. The dashboard draws these counts as they are."""
    d = np.asarray(d_ns, dtype=np.float64) / 1000.0
    if not len(d):
        return {"edges_us": [], "counts": []}
    lo, hi = float(d.min()), float(d.max())
    if hi - lo <= 0:
        half = max(abs(lo) * 0.005, 5e-4)  # one narrow bin centred on the value
        return {"edges_us": [lo - half, lo + half], "counts": [int(len(d))]}
    n = bins or min(MAX_HIST_BINS, max(1, auto_bin_count(d)))
    raw = (hi - lo) / n
    pow10 = 10 ** np.floor(np.log10(raw))
    width = next(m * pow10 for m in (1, 2, 5, 10) if m * pow10 >= raw)
    start = np.floor(lo / width) * width
    count = int(np.floor((hi - start) / width)) + 1
    edges = start + width * np.arange(count + 1)
    counts, edges = np.histogram(d, bins=edges)
    return {"edges_us": [round(float(x), 6) for x in edges], "counts": [int(c) for c in counts]}


SHORT_KERNEL_US = 10.0  # kernels shorter than this cost about as much to launch as to run


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
    summary = {
        "count": int(len(ids)),
        "total_us": _us(dur.sum()),
        "distinct": int(len(uniq)),
        "mean_us": _us(dur.mean()),
        "p50_us": percentile(dur / 1000.0, 50),
        "short_share": round(float((dur < SHORT_KERNEL_US * 1000).mean()), 4),
    }
    return summary, top


def precision(rt: RankTrace) -> dict[str, float]:
    sel = rt.mask_cat(CAT_KERNEL)
    if not sel.any():
        return {}
    by_name: dict[int, str] = {}
    for nid in distinct(rt["name_id"][sel]):
        name = rt.names[nid]
        if kernel_type(name) == COMMUNICATION:
            by_name[int(nid)] = COMMUNICATION_PRECISION
            continue
        by_name[int(nid)] = name_precision(name)
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
    nums = [step_number(rt.names[i]) for i in rt["name_id"][sel].tolist()]
    d = rt["dur_ns"][sel]
    rows = [{"step": n, "ts_us": _us(t), "dur_us": _us(x)} for n, t, x in zip(nums, rt["ts_ns"][sel].tolist(), d.tolist())]
    if rt.meta.cpu_ops_sampled:  # these steps' times include Kineto's recording (step_outlier leaves them out)
        held = steps_with_ops(rt, rt["ts_ns"][sel], rt["ts_ns"][sel] + d)
        for row, h in zip(rows, held.tolist()):
            row["cpu_ops_recorded"] = h
    if rt.meta.profiler_busy_ns:  # ... and these ran while our writer thread converted a window
        for row, h in zip(rows, during_profiler_writing(rt, rt["ts_ns"][sel], rt["ts_ns"][sel] + d).tolist()):
            if h:
                row["profiler_writing"] = True
    return {**_stats_us(d), "steps": rows, "histogram": histogram(d)}


def annotation_groups(rt: RankTrace) -> dict[str, np.ndarray]:
    """Durations (ns) per annotation label: host-side spans under their name, device-side copies (Kineto's
    gpu_user_annotation) apart as "<name> (GPU)", and step annotations pooled as "ProfilerStep#N" / "step_N".
    The one grouping behind the CLI's, the JSON's and the dashboard's annotation figures."""
    out: dict[str, list[np.ndarray]] = {}
    for cat, suffix in ((CAT_USER_ANNOTATION, ""), (CAT_GPU_USER_ANNOTATION, " (GPU)")):
        sel = rt.mask_cat(cat)
        if not sel.any():
            continue
        ids, dur = rt["name_id"][sel], rt["dur_ns"][sel]
        uniq, inv = np.unique(ids, return_inverse=True)
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(uniq) + 1))
        for k, code in enumerate(uniq.tolist()):
            name = rt.names[code]
            m = STEP_NAME.match(name)
            if m:
                name = "ProfilerStep#N" if name.startswith("ProfilerStep") else "step_N"
            out.setdefault(name + suffix, []).append(dur[order[bounds[k]:bounds[k + 1]]])
    return {k: np.concatenate(v) for k, v in out.items()}


def annotation_table(rt: RankTrace, top_n: int = 20) -> list[dict]:
    groups = annotation_groups(rt)
    names = sorted(groups, key=lambda k: -float(groups[k].sum()))[:top_n]
    return [{"name": n, "side": "GPU" if n.endswith(" (GPU)") else "CPU", **_stats_us(groups[n]),
             "histogram": histogram(groups[n])} for n in names]


PHASE_WORDS = ("forward", "backward", "optimizer")
DATALOADER = re.compile(r"DataLoader|dataloader|_next_data|__next__")


def steps_with_ops(rt: RankTrace, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which steps hold recorded framework operators (one starts inside the step). The operators themselves say
    it, not the recorded time ranges: those are on our clock, the operators on Kineto's."""
    op_ts = rt["ts_ns"][rt.mask_cat(CAT_CPU_OP)]  # sorted, as every column
    return np.searchsorted(op_ts, ends, side="right") > np.searchsorted(op_ts, starts, side="left")


def during_profiler_writing(rt: RankTrace, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which steps ran while our writer thread converted a window (rt.meta.profiler_busy_ns)."""
    if not rt.meta.profiler_busy_ns:
        return np.zeros(len(starts), dtype=bool)
    busy = np.array(rt.meta.profiler_busy_ns, dtype=np.int64).reshape(-1, 2)
    i = np.searchsorted(busy[:, 0], ends, side="left") - 1  # the last span starting before the step ends
    return (i >= 0) & (busy[np.maximum(i, 0), 1] > starts)


def cpu_ops_sampling(rt: RankTrace) -> dict | None:
    """For a duty-cycled capture: its K of N and how many steps hold operators; None when operators (if any)
    cover the whole trace."""
    if not rt.meta.cpu_ops_sampled:
        return None
    recorded = rt.meta.cpu_ops.get("recorded_ns") or []
    is_step = np.array([bool(STEP_NAME.match(n)) for n in rt.names], dtype=bool)
    rows = (np.flatnonzero(rt.mask_cat(CAT_USER_ANNOTATION) & is_step[rt["name_id"]]) if len(is_step)
            else np.zeros(0, np.int64))
    ts, end = rt["ts_ns"][rows], rt["ts_ns"][rows] + rt["dur_ns"][rows]
    c = rt.meta.cpu_ops
    return {"steps": int(c["steps"]), "every_steps": int(c["every_steps"]), "windows": len(recorded),
            "recorded_us": _us(float(sum(e - s for s, e in recorded))), "total_steps": int(len(rows)),
            "recorded_steps": int(steps_with_ops(rt, ts, end).sum())}


def step_breakdown(rt: RankTrace) -> dict | None:
    """Where the steps' time goes: inside Forward/Backward/Optimizer annotations, in DataLoader operators,
    and with the GPU idle. The input_bound finding reads it. None without step annotations. When a duty cycle
    recorded operators in some steps only, the DataLoader time is measured over those steps
    (`dataloader_steps`, `dataloader_step_us`)."""
    sel = rt.mask_cat(CAT_USER_ANNOTATION)
    is_step = np.array([bool(STEP_NAME.match(n)) for n in rt.names], dtype=bool)
    if not len(is_step):
        return None
    step_rows = np.flatnonzero(sel & is_step[rt["name_id"]])
    if not len(step_rows):
        return None
    ts, dur, nid = rt["ts_ns"], rt["dur_ns"], rt["name_id"]
    rel0 = int(ts[step_rows].min())  # relative ns: float64 is exact on them

    def union_of(mask):
        rows = np.flatnonzero(mask)
        s, e = merge_intervals((ts[rows] - rel0).astype(np.float64), (ts[rows] + dur[rows] - rel0).astype(np.float64))
        return s, e

    lower = [n.lower() for n in rt.names]
    phase_of = np.array([next((w for w in PHASE_WORDS if w in n), "") for n in lower], dtype=object)
    ann_phase = sel & (phase_of[nid] != "") if len(lower) else sel
    phases_seen = sorted(set(phase_of[nid[ann_phase]].tolist()))
    loader_name = np.array([bool(DATALOADER.search(n)) for n in rt.names], dtype=bool)
    loader = rt.mask_cat(CAT_CPU_OP, CAT_USER_ANNOTATION) & loader_name[nid]
    gpu = rt.mask_cat(CAT_KERNEL, CAT_GPU_MEMCPY, CAT_GPU_MEMSET)
    lo = (ts[step_rows] - rel0).astype(np.float64)
    hi = (ts[step_rows] + dur[step_rows] - rel0).astype(np.float64)

    def inside_steps(mask, lo=lo, hi=hi) -> float:
        u_s, u_e = union_of(mask)
        return float((covered_upto(u_s, u_e, hi) - covered_upto(u_s, u_e, lo)).sum())

    total = float((hi - lo).sum())
    phases, loaded, gpu_busy = inside_steps(ann_phase), inside_steps(loader), inside_steps(gpu)
    have_phases = len(phases_seen) == len(PHASE_WORDS)
    out = {
        "steps": int(len(step_rows)),
        "step_us": _us(total),
        "phases": phases_seen,
        "outside_phases_us": _us(total - phases) if have_phases else None,
        "dataloader_us": _us(loaded),
        "gpu_idle_us": _us(total - gpu_busy) if gpu.any() else None,
    }
    if rt.meta.cpu_ops_sampled:  # DataLoader operators exist in the recorded steps only: measure them there
        inside = steps_with_ops(rt, ts[step_rows], ts[step_rows] + dur[step_rows])
        out["dataloader_steps"] = int(inside.sum())
        out["dataloader_step_us"] = _us(float((hi[inside] - lo[inside]).sum()))
        out["dataloader_us"] = _us(inside_steps(loader, lo[inside], hi[inside])) if inside.any() else 0.0
    return out


def cpu_activity(rt: RankTrace) -> dict | None:
    """Time any thread ran an operator (framework operators, CUDA runtime and driver calls), over the span of the
    trace's host events. Annotation and Python-function spans are not work: a step annotation around a sleep is idle
    (None when no operator was recorded, as in a capture without record_cpu_ops)."""
    sel = rt.mask_cat(CAT_CPU_OP, CAT_CUDA_RUNTIME, "cuda_driver")
    if not sel.any():
        return None
    host = sel | rt.mask_cat(CAT_USER_ANNOTATION, "python_function")
    ts, end = rt["ts_ns"][sel], rt["ts_ns"][sel] + rt["dur_ns"][sel]
    s, e = merge_intervals(ts, end)
    t0, t1 = int(rt["ts_ns"][host].min()), int((rt["ts_ns"][host] + rt["dur_ns"][host]).max())
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


COMPILED = re.compile(r"^(?:CompiledFunction|Torch-Compiled Region|triton_)")


def compiled(rt: RankTrace) -> bool:
    """Whether the trace shows torch.compile at work (its regions, operators or Triton kernels)."""
    return any(COMPILED.match(n) for n in rt.names)
