"""The dashboard's data: one JSON-able dict that dashboard.js turns into Plotly charts.

Each section is either data or ``{"missing": "<why there is nothing to show>"}``, so a CPU-only run
says why a GPU chart is absent instead of drawing an empty one. The GPU active/idle split comes from
the analysis engine (profiler.analysis, HTA's temporal-breakdown definition) so the dashboard and
``sagelaunch profile analyze`` agree; the other sections are aggregations over the loaded columns.
"""

from __future__ import annotations

import os
import re
from typing import Any

import msgspec
import numpy as np

from sagelaunch.jobspec.errors import SagelaunchRuntimeError
from sagelaunch.profiler import schema as S
from sagelaunch.profiler.analysis import analyze
from sagelaunch.profiler.analysis.gpu_breakdown import merge_intervals
from sagelaunch.profiler.analysis.metrics import annotation_groups, coverage_per_bin, histogram
from sagelaunch.profiler.records import AnalysisResult, Busy, CpuActivity, RankAnalysis

NO_GPU = "no GPU activity in this profile (a CPU-only run, or the trace did not record CUDA/HIP activity)"
NO_COUNTERS = ("no {what} samples: the system monitor did not record this profile "
               "(a torch.profiler/Kineto trace holds no utilisation counters)")
STEP_NAME = re.compile(r"^(ProfilerStep#\d+|step_\d+)$", re.I)
UTIL_BINS = 200
MAX_ANNOTATION_NAMES = 300
MAX_SAMPLES = 20_000


CPU_ONLY_BANNER = ("CPU-only profile: no GPU kernels or memory copies were recorded, so the GPU charts are hidden. "
                   "Below: CPU activity, steps and annotations.")


def dashboard_data(profile: S.Profile, analysis: AnalysisResult | None = None, title: str = "") -> dict[str, Any]:
    if analysis is None:
        analysis = analyze(profile)
    ranks = [r for r in profile.ranks.values() if len(r)]
    gpu = [(r, r.mask_cat(S.CAT_KERNEL, S.CAT_GPU_MEMCPY, S.CAT_GPU_MEMSET, S.CAT_CUDA_SYNC)) for r in ranks]
    has_gpu = any(m.any() for _, m in gpu)
    t0 = _t0(profile)
    per_rank = _rank_metrics(ranks, analysis)
    sections: dict[str, Any] = {
        "gpu_active": _gpu_active(gpu, analysis) if has_gpu else {"missing": NO_GPU},
        "gpu_util": _gpu_util(profile, gpu, t0, has_gpu),
        "cpu_active": _cpu_active(analysis),
        "cpu_util": _cpu_util(profile, t0),
        "kernels": _kernels(ranks) if has_gpu else {"missing": NO_GPU},
        "step_time": _step_times(analysis),
        "precision": _precision(per_rank) if has_gpu else {"missing": NO_GPU},
        "gpu_activity": _gpu_activity(per_rank) if has_gpu else {"missing": NO_GPU},
        "memory_ops": _memory_ops(per_rank) if has_gpu else {"missing": NO_GPU},
        "annotations": _annotations(ranks),
    }
    return {
        "title": title or profile.source,
        "source": profile.source,
        "ranks": sorted(profile.ranks),
        "hosts": sorted({r.meta.host or "algo-1" for r in ranks}),
        "warnings": list(profile.warnings)[:20],
        "banner": None if has_gpu else CPU_ONLY_BANNER,
        # the records as their JSON, for dashboard.js
        "figures": msgspec.to_builtins(analysis.figures),
        "findings": msgspec.to_builtins(analysis.findings),
        "ranks_compared": msgspec.to_builtins(analysis.ranks_compared),
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


def _gpu_active(gpu, analysis: AnalysisResult) -> dict[str, Any]:
    temporal = [r.temporal for r in analysis.ranks.values() if r.temporal is not None]
    if temporal:
        compute = sum(t.compute_us for t in temporal)
        non_compute = sum(t.non_compute_us for t in temporal)
        idle = sum(t.idle_us for t in temporal)
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


def _node_means(series: list[dict[str, Any]], host_of) -> list[dict[str, Any]]:
    """One line per node: the mean of its GPUs' lines, sample by sample (lines of one node share their times)."""
    out = []
    for host in sorted({host_of(x) for x in series}):
        mine = [x for x in series if host_of(x) == host]
        n = min(len(x["v"]) for x in mine)
        t = mine[0]["t"][:n]
        v = np.mean([np.asarray(x["v"][:n], dtype=np.float64) for x in mine], axis=0)
        out.append({"name": f"{host} (mean of {len(mine)} GPU{'s' if len(mine) > 1 else ''})", "t": t,
                    "v": v.round(2).tolist(), "node": host})
    return out


def _gpu_util(profile: S.Profile, gpu, t0: int, has_gpu: bool) -> dict[str, Any]:
    series = _series_from_counters(profile, S.METRIC_GPU_UTIL, t0)
    if series:
        for x in series:
            x["node"] = x["name"].split(" GPU ")[0]
        return {"series": _node_means(series, lambda x: x["node"]), "per_gpu": series,
                "source": "NVML utilisation samples; a node's line is the mean of its GPUs"}
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
            host = r.meta.host or "algo-1"
            out.append({"name": f"{host} GPU {d} (rank {r.meta.rank})", "t": centers,
                        "v": _busy_series(r, dm, t0, lo, hi), "node": host})
    return {"series": _node_means(out, lambda x: x["node"]), "per_gpu": out,
            "source": "busy time of GPU activity in the trace (no NVML samples were recorded); a node's line is the mean of its GPUs"}


def _cpu_active(analysis: AnalysisResult) -> dict[str, Any]:
    """The pie shows the figure the CLI prints (profiler/figures.py): sampled utilisation when the system monitor
    recorded it, else the trace's CPU busy time; the source line says which."""
    figs = analysis.figures
    sampled = [f for f in figs if f.key == "cpu_util"]
    if sampled:
        mean = float(np.mean([f.value for f in sampled]))
        out = _pie(["active", "idle"], [mean, 100.0 - mean], unit="%")
        out["source"] = sampled[0].label + (": " + ", ".join(f"{f.host} {f.text}" for f in sampled))
        return out
    traced = [f for f in figs if f.key == "cpu_busy_trace"]
    if traced:
        busy = sum(f.value for f in traced)
        span = sum(_cpu(analysis, f.rank).span_us for f in traced)
        out = _pie(["busy", "idle"], [busy, max(span - busy, 0.0)])
        out["source"] = traced[0].label + ": " + ", ".join(f"rank {f.rank} {f.text}" for f in traced)
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


def _simplify(name: str) -> str:
    """A kernel name without "void ", namespaces and the argument list."""
    n = re.sub(r"^void\s+", "", name.strip()).replace("(anonymous namespace)::", "")
    depth, cut = 0, len(n)
    for i, ch in enumerate(n):  # the argument list is the first "(" outside template brackets
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            cut = i
            break
    return re.sub(r"\b[A-Za-z_]\w*::", "", n[:cut]).replace(" >", ">")


def _cut(s: str, width: int) -> str:
    if len(s) <= width:
        return s
    head = (width - 1) * 2 // 3
    return s[:head] + "…" + s[len(s) - (width - 1 - head):]


def _nearest_common(strings: list[str]) -> list[int]:
    """For each string, the longest prefix it shares with any other (its neighbours in sorted order)."""
    order = sorted(range(len(strings)), key=strings.__getitem__)
    out = [0] * len(strings)
    for a, b in zip(order, order[1:]):
        n = len(os.path.commonprefix([strings[a], strings[b]]))
        out[a], out[b] = max(out[a], n), max(out[b], n)
    return out


def short_labels(names: list[str], width: int = 48) -> list[str]:
    """Readable labels for full kernel names that stay distinct: the name without "void", namespaces and
    arguments, cut in the middle when long. Names that would look alike show their start, then the part where
    they differ from their nearest look-alike; a number is the last resort (names that differ only in arguments)."""
    simple = [_simplify(n) or n for n in names]
    labels = [_cut(x, width) for x in simple]
    counts = {lbl: labels.count(lbl) for lbl in labels}
    prefix = _nearest_common(simple)
    suffix = _nearest_common([x[::-1] for x in simple])
    for i, x in enumerate(simple):
        if counts[labels[i]] == 1:
            continue
        a = max(0, prefix[i] - 10)
        b = min(len(x), max(len(x) - suffix[i], prefix[i] + 1) + 10)
        head = x[: min(a, width // 3)]
        window = x[a:b] if b - a <= width else x[a: a + width]
        labels[i] = (head + "…" if a > len(head) else head) + window + ("…" if a + len(window) < len(x) else "")
    counts = {lbl: labels.count(lbl) for lbl in labels}
    seen: dict[str, int] = {}
    for i, lbl in enumerate(labels):
        if counts[lbl] > 1:
            seen[lbl] = seen.get(lbl, 0) + 1
            labels[i] = f"{lbl} #{seen[lbl]}"
    return labels


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
    names = [k for k, _ in items]
    return {"names": names, "labels": short_labels(names), "total_us": [round(v[0], 3) for _, v in items],
            "count": [v[1] for _, v in items]}


def _step_times(analysis: AnalysisResult) -> dict[str, Any]:
    """Step durations of every rank (the analysis' host-side steps) and their histogram (metrics.histogram)."""
    durs = [x.dur_us for r in analysis.ranks.values() if r.steps for x in r.steps.steps]
    if not durs:
        return {"missing": "no step annotations (step_N from our callback/annotate, or ProfilerStep#N from torch.profiler)"}
    us = np.asarray(durs, dtype=np.float64)
    return {"values_ms": (us / 1e3).round(4).tolist(), "histogram": histogram(us * 1000)}


def _rank_metrics(ranks, analysis: AnalysisResult) -> list[RankAnalysis]:
    """The analyses of the ranks with events (their precision, gpu_activity and memory_ops are summed)."""
    return [analysis.ranks[str(r.meta.rank)] for r in ranks]


def _sum_labels(per_rank: list[RankAnalysis], key: str) -> dict[str, float]:
    acc: dict[str, float] = {}
    for a in per_rank:
        for label, v in getattr(a, key).items():
            acc[label] = acc.get(label, 0.0) + (v.us if isinstance(v, Busy) else v)
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


DEFAULT_ANNOTATIONS = ("forward", "backward", "optimizer", "step")


def _annotations(ranks) -> dict[str, Any]:
    """Every annotation label (metrics.annotation_groups: the grouping the analysis uses) with its histogram."""
    acc: dict[str, list[np.ndarray]] = {}
    for r in ranks:
        for name, durs in annotation_groups(r).items():
            acc.setdefault(name, []).append(durs)
    if not acc:
        return {"missing": "no annotations: use profiler.annotate(name) or the Hugging Face callback in the script"}
    merged = {k: np.concatenate(v) for k, v in acc.items()}
    names = sorted(merged, key=lambda k: -float(merged[k].sum()))[:MAX_ANNOTATION_NAMES]
    defaults = []
    for word in DEFAULT_ANNOTATIONS:  # the phases of a step, then the step itself; host-side spans first
        hit = next((n for n in names if word in n.lower() and not n.endswith("(GPU)") and n not in defaults), None)
        if hit:
            defaults.append(hit)
    for n in names:  # then the busiest others, up to three charts
        if len(defaults) >= 3:
            break
        if n not in defaults and not n.endswith("(GPU)"):
            defaults.append(n)
    return {"names": names, "default": defaults[0], "defaults": defaults,
            "counts": {n: int(len(merged[n])) for n in names},
            "histograms": {n: histogram(merged[n]) for n in names},
            "durations_ms": {n: (merged[n][:MAX_SAMPLES] / 1e6).round(4).tolist() for n in names}}


def _cpu(analysis: AnalysisResult, rank: str | None) -> CpuActivity:
    """The CPU activity of the rank a cpu_busy_trace figure names (the figure exists only with it)."""
    cpu = analysis.ranks[rank].cpu if rank is not None else None
    if cpu is None:
        raise SagelaunchRuntimeError(f"figure cpu_busy_trace names rank {rank!r}, which has no CPU activity")
    return cpu
