"""The dashboard's data: one JSON-able dict that dashboard.js turns into Plotly charts.

Each section is either data or ``{"missing": "<why there is nothing to show>"}``, so a CPU-only run
says why a GPU chart is absent instead of drawing an empty one. The GPU active/idle split comes from
the analysis engine (profiler.analysis, HTA's temporal-breakdown definition) so the dashboard and
``sagelaunch profile analyze`` agree; the other sections are aggregations over the loaded columns.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from profiler import schema as S
from profiler.analysis.gpu_breakdown import merge_intervals
from profiler.analysis.metrics import coverage_per_bin

NO_GPU = "no GPU activity in this profile (a CPU-only run, or the trace did not record CUDA/HIP activity)"
NO_COUNTERS = ("no {what} samples: the system monitor did not record this profile "
               "(a torch.profiler/Kineto trace holds no utilisation counters)")
STEP_NAME = re.compile(r"^(ProfilerStep#\d+|step_\d+)$", re.I)
UTIL_BINS = 200
MAX_ANNOTATION_NAMES = 300
MAX_SAMPLES = 20_000


def dashboard_data(profile: S.Profile, analysis: dict | None = None, title: str = "") -> dict[str, Any]:
    ranks = [r for r in profile.ranks.values() if len(r)]
    gpu = [(r, r.mask_cat(S.CAT_KERNEL, S.CAT_GPU_MEMCPY, S.CAT_GPU_MEMSET, S.CAT_CUDA_SYNC)) for r in ranks]
    has_gpu = any(m.any() for _, m in gpu)
    t0 = _t0(profile)
    per_rank = _rank_metrics(ranks, analysis)
    sections: dict[str, Any] = {
        "gpu_active": _gpu_active(gpu, analysis) if has_gpu else {"missing": NO_GPU},
        "gpu_util": _gpu_util(profile, gpu, t0, has_gpu),
        "cpu_active": _cpu_active(profile, ranks),
        "cpu_util": _cpu_util(profile, t0),
        "kernels": _kernels(ranks) if has_gpu else {"missing": NO_GPU},
        "step_time": _step_times(ranks),
        "precision": _precision(per_rank) if has_gpu else {"missing": NO_GPU},
        "gpu_activity": _gpu_activity(per_rank) if has_gpu else {"missing": NO_GPU},
        "memory_ops": _memory_ops(per_rank) if has_gpu else {"missing": NO_GPU},
        "annotations": _annotations(ranks),
    }
    return {
        "title": title or profile.source,
        "ranks": sorted(profile.ranks),
        "hosts": sorted({r.meta.host or "algo-1" for r in ranks}),
        "warnings": list(profile.warnings)[:20],
        "sections": sections,
    }


def _t0(profile: S.Profile) -> int:
    starts = [int(r["ts_ns"][0]) for r in profile.ranks.values() if len(r)]
    if profile.counters is not None and profile.counters.num_rows:
        starts.append(int(np.min(profile.counters["ts_ns"].to_numpy())))
    return min(starts) if starts else 0


def _pie(labels: list[str], values: list[float], unit: str = "us") -> dict[str, Any]:
    keep = [(lbl, float(v)) for lbl, v in zip(labels, values) if v > 0]
    if not keep:
        return {"missing": "all values are zero"}
    return {"labels": [k for k, _ in keep], "values": [v for _, v in keep], "unit": unit}


def _merged_busy_us(starts: np.ndarray, ends: np.ndarray) -> float:
    """Length of the union of [start, end) intervals, in µs (inputs in ns)."""
    run_start, run_end = merge_intervals(starts, ends)
    return float((run_end - run_start).sum()) / 1e3


def _gpu_active(gpu, analysis: dict | None) -> dict[str, Any]:
    temporal = [r.get("temporal") for r in ((analysis or {}).get("ranks") or {}).values()]
    temporal = [t for t in temporal if isinstance(t, dict) and "idle_us" in t]
    if temporal:
        compute = sum(float(t.get("compute_us", 0)) for t in temporal)
        non_compute = sum(float(t.get("non_compute_us", 0)) for t in temporal)
        idle = sum(float(t.get("idle_us", 0)) for t in temporal)
        out = _pie(["compute (active)", "non-compute (active)", "idle"], [compute, non_compute, idle])
        out["source"] = "analysis temporal breakdown (HTA definitions)"
        return out
    active = idle = 0.0
    for r, m in gpu:
        if not m.any():
            continue
        s, e = r["ts_ns"][m], r["ts_ns"][m] + r["dur_ns"][m]
        busy = _merged_busy_us(s, e)
        active += busy
        idle += max(0.0, (e.max() - s.min()) / 1e3 - busy)
    return _pie(["active", "idle"], [active, idle])


def _series_from_counters(profile: S.Profile, metric: str, t0: int, aggregate_cores: bool = False):
    table = profile.counters
    if table is None or table.num_rows == 0:
        return []
    metrics = np.array(table["metric"].to_pylist())
    rows = np.flatnonzero(metrics == metric)
    if not len(rows):
        return []
    hosts = np.array(table["host"].to_pylist())[rows]
    index = table["index"].to_numpy()[rows]
    ts = table["ts_ns"].to_numpy()[rows]
    val = table["value"].to_numpy()[rows].astype(np.float64)
    out = []
    for host in sorted(set(hosts.tolist())):
        hm = hosts == host
        if aggregate_cores:
            whole = hm & (index < 0)
            if whole.any():
                groups = [("", whole)]
            else:  # average the cores sample by sample
                t_u, inv = np.unique(ts[hm], return_inverse=True)
                mean = np.bincount(inv, weights=val[hm]) / np.bincount(inv)
                out.append({"name": f"{host} CPU", "t": ((t_u - t0) / 1e9).round(3).tolist(), "v": mean.round(2).tolist()})
                continue
        else:
            groups = [(f" GPU {int(i)}", hm & (index == i)) for i in sorted(set(index[hm].tolist()))]
        for suffix, m in groups:
            order = np.argsort(ts[m], kind="stable")
            name = f"{host}{suffix}" if suffix else f"{host} CPU"
            out.append({"name": name, "t": ((ts[m][order] - t0) / 1e9).round(3).tolist(), "v": val[m][order].round(2).tolist()})
    return out


def _busy_series(r: S.RankTrace, mask: np.ndarray, t0: int, lo: int, hi: int) -> list[float]:
    """Percent of each of UTIL_BINS time bins covered by the masked events (clipped per bin)."""
    edges = np.linspace(lo, hi, UTIL_BINS + 1)
    s = r["ts_ns"][mask].astype(np.float64)
    busy = coverage_per_bin(*merge_intervals(s, s + r["dur_ns"][mask]), edges) / np.diff(edges) * 100.0
    return busy.round(2).tolist()


def _gpu_util(profile: S.Profile, gpu, t0: int, has_gpu: bool) -> dict[str, Any]:
    series = _series_from_counters(profile, S.METRIC_GPU_UTIL, t0)
    if series:
        return {"series": series, "source": "NVML utilisation samples"}
    if not has_gpu:
        return {"missing": NO_GPU}
    out = []
    lo = min(int(r["ts_ns"][m].min()) for r, m in gpu if m.any())
    hi = max(int((r["ts_ns"][m] + r["dur_ns"][m]).max()) for r, m in gpu if m.any())
    centers = ((np.linspace(lo, hi, UTIL_BINS + 1)[:-1] + (hi - lo) / UTIL_BINS / 2 - t0) / 1e9).round(4).tolist()
    for r, m in gpu:
        dev = r["device"]
        for d in sorted(set(dev[m].tolist())):
            dm = m & (dev == d)
            out.append({"name": f"{r.meta.host or 'algo-1'} GPU {d} (rank {r.meta.rank})", "t": centers,
                        "v": _busy_series(r, dm, t0, lo, hi)})
    return {"series": out, "source": "busy time of GPU activity in the trace (no NVML samples were recorded)"}


def _cpu_active(profile: S.Profile, ranks) -> dict[str, Any]:
    series = _series_from_counters(profile, S.METRIC_CPU_UTIL, 0, aggregate_cores=True)
    if series:
        v = np.concatenate([np.asarray(s["v"]) for s in series])
        mean = float(v.mean()) if len(v) else 0.0
        out = _pie(["active", "idle"], [mean, 100.0 - mean], unit="%")
        out["source"] = "mean CPU utilisation over the run"
        return out
    return {"missing": NO_COUNTERS.format(what="CPU utilisation")}


def _cpu_util(profile: S.Profile, t0: int) -> dict[str, Any]:
    series = _series_from_counters(profile, S.METRIC_CPU_UTIL, t0, aggregate_cores=True)
    if series:
        return {"series": series, "source": "psutil samples"}
    return {"missing": NO_COUNTERS.format(what="CPU utilisation")}


def _group_sum(names: list[str], ids: np.ndarray, weights: np.ndarray) -> tuple[list[str], np.ndarray, np.ndarray]:
    n = len(names)
    total = np.bincount(ids, weights=weights, minlength=n)
    count = np.bincount(ids, minlength=n)
    return names, total, count


def _kernels(ranks) -> dict[str, Any]:
    totals: dict[str, list[float]] = {}
    for r in ranks:
        m = r.mask_cat(S.CAT_KERNEL)
        if not m.any():
            continue
        names, total, count = _group_sum(r.names, r["name_id"][m], r["dur_ns"][m] / 1e3)
        for i in np.flatnonzero(count):
            t = totals.setdefault(names[i], [0.0, 0])
            t[0] += float(total[i])
            t[1] += int(count[i])
    if not totals:
        return {"missing": "the profile has GPU activity but no kernels (only memcpy/memset)"}
    items = sorted(totals.items(), key=lambda kv: -kv[1][0])
    return {"names": [k for k, _ in items], "total_us": [round(v[0], 3) for _, v in items],
            "count": [v[1] for _, v in items]}


def _annotation_rows(r: S.RankTrace) -> dict[str, np.ndarray]:
    """Durations (ns) per annotation name; steps pooled as step_N / ProfilerStep#N, GPU-side spans apart."""
    out: dict[str, list[np.ndarray]] = {}
    for cat, suffix in ((S.CAT_USER_ANNOTATION, ""), (S.CAT_GPU_USER_ANNOTATION, " (GPU)")):
        m = r.mask_cat(cat)
        if not m.any():
            continue
        ids = r["name_id"][m]
        durs = r["dur_ns"][m]
        for code in np.unique(ids):
            name = r.names[code]
            if STEP_NAME.match(name):
                name = "ProfilerStep#N" if name.startswith("ProfilerStep") else "step_N"
            out.setdefault(name + suffix, []).append(durs[ids == code])
    return {k: np.concatenate(v) for k, v in out.items()}


def _step_times(ranks) -> dict[str, Any]:
    vals = []
    for r in ranks:
        # host-side step annotations only (gpu_user_annotation duplicates them on the device)
        m = r.mask_cat(S.CAT_USER_ANNOTATION, S.CAT_CPU_OP)
        for code in np.unique(r["name_id"][m]):
            if STEP_NAME.match(r.names[code]):
                vals.append(r["dur_ns"][m & (r["name_id"] == code)])
    if not vals:
        return {"missing": "no step annotations (step_N from our callback/annotate, or ProfilerStep#N from torch.profiler)"}
    ms = np.concatenate(vals) / 1e6
    return {"values_ms": ms.round(4).tolist()}


def _rank_metrics(ranks, analysis: dict | None) -> list[dict[str, Any]]:
    """Per-rank precision / gpu_activity / memory_ops as the analysis engine computes them."""
    from profiler.analysis import metrics

    by_rank = (analysis or {}).get("ranks") or {}
    out = []
    for r in ranks:
        a = by_rank.get(str(r.meta.rank))
        if a is None or not all(k in a for k in ("precision", "gpu_activity", "memory_ops")):
            a = {"precision": metrics.precision(r), "gpu_activity": metrics.gpu_activity(r),
                 "memory_ops": metrics.memory_ops(r)}
        out.append(a)
    return out


def _sum_labels(per_rank: list[dict], key: str) -> dict[str, float]:
    acc: dict[str, float] = {}
    for a in per_rank:
        for label, v in (a.get(key) or {}).items():
            acc[label] = acc.get(label, 0.0) + float(v["us"] if isinstance(v, dict) else v)
    return dict(sorted(acc.items(), key=lambda kv: -kv[1]))


def _precision(per_rank) -> dict[str, Any]:
    acc = _sum_labels(per_rank, "precision")
    out = _pie(list(acc), list(acc.values()))
    out["source"] = "kernel names, else the dtype of the CPU op that launched the kernel"
    return out


def _gpu_activity(per_rank) -> dict[str, Any]:
    acc = _sum_labels(per_rank, "gpu_activity")
    return _pie(list(acc), list(acc.values()))


def _memory_ops(per_rank) -> dict[str, Any]:
    acc = _sum_labels(per_rank, "memory_ops")
    out = _pie(list(acc), list(acc.values()))
    if "missing" in out:
        out["missing"] = "no memory operations (memcpy/memset) on the GPU in this profile"
    return out


def _annotations(ranks) -> dict[str, Any]:
    acc: dict[str, list[np.ndarray]] = {}
    for r in ranks:
        for name, durs in _annotation_rows(r).items():
            acc.setdefault(name, []).append(durs)
    if not acc:
        return {"missing": "no annotations: use profiler.annotate(name) or the Hugging Face callback in the script"}
    merged = {k: np.concatenate(v) for k, v in acc.items()}
    names = sorted(merged, key=lambda k: -float(merged[k].sum()))[:MAX_ANNOTATION_NAMES]
    default = next((n for n in names if n.lower() in ("backward", "## backward ##")), None)
    default = default or next((n for n in names if "backward" in n.lower()), names[0])
    return {"names": names, "default": default,
            "durations_ms": {n: (merged[n][:MAX_SAMPLES] / 1e6).round(4).tolist() for n in names}}
