"""Export the timeline as a Chrome/Perfetto trace (JSON) for ui.perfetto.dev or chrome://tracing.

Same tree as our timeline: one Perfetto process per tree group that holds tracks ("algo-1 / GPUs /
GPU 0 (rank 0)"), one thread per track, counters as "C" events, and each launch -> kernel pair as a
flow (ph s/f, bp "e") so Perfetto draws the arrow.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sagelaunch.profiler.timeline.model import TimelineModel


def to_chrome_trace(model: TimelineModel) -> dict:
    t0_us = model.t0_ns / 1e3
    groups: dict[str, int] = {}
    track_pid, track_tid, meta = [], [], []
    for i, t in enumerate(model.tracks):
        group = t.path.rsplit(" / ", 1)[0]
        if group not in groups:
            groups[group] = len(groups) + 1
            meta.append({"ph": "M", "name": "process_name", "pid": groups[group], "tid": 0, "args": {"name": group}})
            meta.append({"ph": "M", "name": "process_sort_index", "pid": groups[group], "tid": 0, "args": {"sort_index": groups[group]}})
        track_pid.append(groups[group])
        track_tid.append(i + 1)
        meta.append({"ph": "M", "name": "thread_name", "pid": groups[group], "tid": i + 1, "args": {"name": t.label}})
        meta.append({"ph": "M", "name": "thread_sort_index", "pid": groups[group], "tid": i + 1, "args": {"sort_index": i}})
    pid_of = np.array(track_pid or [0], dtype=np.int64)[model.track] if len(model) else np.zeros(0, np.int64)
    tid_of = np.array(track_tid or [0], dtype=np.int64)[model.track] if len(model) else np.zeros(0, np.int64)
    ts = (model.start_us + t0_us).tolist()
    dur = model.dur_us.astype(np.float64).round(3).tolist()
    names, cats = model.names, model.cats
    name_l, cat_l, pid_l, tid_l = model.name.tolist(), model.cat.tolist(), pid_of.tolist(), tid_of.tolist()
    corr_l = model.corr.tolist()
    events = [
        {"ph": "X", "name": names[name_l[i]], "cat": cats[cat_l[i]], "pid": pid_l[i], "tid": tid_l[i],
         "ts": ts[i], "dur": dur[i], "args": {"correlation": corr_l[i]} if corr_l[i] >= 0 else {}}
        for i in range(len(model))
    ]
    # flows: from each launch (the lower index of a pair whose category is a runtime call) to its GPU event
    runtime = {i for i, c in enumerate(cats) if c in ("cuda_runtime", "cuda_driver")}
    src = np.flatnonzero((model.link >= 0) & np.isin(model.cat, list(runtime)))
    for k, i in enumerate(src.tolist()):
        j = int(model.link[i])
        events.append({"ph": "s", "id": k + 1, "name": "launch", "cat": "ac2g", "pid": pid_l[i], "tid": tid_l[i], "ts": ts[i]})
        events.append({"ph": "f", "bp": "e", "id": k + 1, "name": "launch", "cat": "ac2g", "pid": pid_l[j], "tid": tid_l[j], "ts": ts[j]})
    for c in model.counters:
        t = model.tracks[c.track]
        pid, label = track_pid[c.track], t.label
        for x, v in zip((c.t_us + t0_us).tolist(), c.values.tolist()):
            events.append({"ph": "C", "name": label, "pid": pid, "ts": x, "args": {"value": v}})
    return {"traceEvents": meta + events, "displayTimeUnit": "ms",
            "otherData": {"producer": "sagelaunch", "steps": model.steps}}


def write_perfetto(model: TimelineModel, out: Path) -> Path:
    import orjson

    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(orjson.dumps(to_chrome_trace(model)))
    return out
