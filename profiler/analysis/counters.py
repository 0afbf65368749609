"""Utilisation over time per host from the COUNTERS table (CPU per core, GPU per device)."""

from __future__ import annotations

import numpy as np

from sagelaunch.profiler.records import HostSummary, convert

MAX_POINTS = 300  # per series in the JSON; the dashboard reads the full table from the artifact if it wants more


def _column(table, name):
    col = table.column(name).combine_chunks()
    import pyarrow as pa

    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    return col.to_numpy(zero_copy_only=False)


def summarize_counters(table) -> dict[str, HostSummary]:
    ts = _column(table, "ts_ns").astype(np.int64)
    host = _column(table, "host")
    metric = _column(table, "metric")
    index = _column(table, "index").astype(np.int64)
    value = _column(table, "value").astype(np.float64)
    out: dict[str, dict] = {}
    for h in sorted(set(host.tolist())):
        hm = host == h
        t0 = int(ts[hm].min())
        per_metric: dict[str, dict] = {}
        for m in sorted(set(metric[hm].tolist())):
            sel = hm & (metric == m)
            series = {}
            for i in sorted(set(index[sel].tolist())):
                s = sel & (index == i)
                order = np.argsort(ts[s], kind="stable")
                t, v = ts[s][order], value[s][order]
                step = max(1, int(np.ceil(len(t) / MAX_POINTS)))
                series["all" if i < 0 else str(i)] = {
                    "t_s": [round((x - t0) / 1e9, 3) for x in t[::step].tolist()],
                    "value": [round(float(x), 2) for x in v[::step]],
                    "mean": round(float(v.mean()), 2),
                    "max": round(float(v.max()), 2),
                }
            per_metric[m] = {
                "series": series,
                "mean": round(float(value[sel].mean()), 2),
                "samples": int(sel.sum()),
            }
        out[h] = {"t0_ns": t0, "span_s": round((int(ts[hm].max()) - t0) / 1e9, 3), "metrics": per_metric}
    return convert(out, dict[str, HostSummary])
