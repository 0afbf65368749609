"""The timeline of a loaded profile: tracks arranged host -> device, events as numpy columns.

Tree (what the timeline and the Perfetto export show)::

    algo-N
      CPU            utilisation counters (whole host, per core), then one track per host thread (CPU ops)
      GPUs
        GPU d (rank r)
          host         kernel launches (runtime calls) and annotations of rank r for device d
          utilisation  NVML counters of device d, when the monitor recorded them
          stream s     kernel / memcpy / memset / sync executions, one track per stream

Launch -> kernel links come from Kineto's correlation id (same rank). Times are microseconds from the
earliest event or sample of the whole profile (``t0_ns``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from sagelaunch.profiler import schema as S
from sagelaunch.profiler.analysis.loop import step_boundaries

HOST_SIDE_GPU_CATS = (S.CAT_CUDA_RUNTIME, S.CAT_CUDA_DRIVER, S.CAT_USER_ANNOTATION)
STEP_PATTERNS = (re.compile(r"^ProfilerStep#(\d+)$"), re.compile(r"^step_(\d+)$", re.I))


@dataclass
class Track:
    label: str
    path: str  # "algo-1 / GPUs / GPU 0 (rank 0) / stream 7": unique, shown in the selection panel
    kind: str = "slices"  # "slices" | "counter"


@dataclass
class TreeNode:
    label: str
    track: int | None = None
    children: list["TreeNode"] = field(default_factory=list)

    def child(self, label: str) -> "TreeNode":
        for c in self.children:
            if c.label == label and c.track is None:
                return c
        node = TreeNode(label)
        self.children.append(node)
        return node

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"label": self.label}
        if self.track is not None:
            d["track"] = self.track
        if self.children:
            d["children"] = [c.to_dict() for c in self.children]
        return d


@dataclass
class Counter:
    track: int
    t_us: np.ndarray  # float64, from t0
    values: np.ndarray  # float32
    unit: str = "%"
    max: float = 100.0


@dataclass
class TimelineModel:
    """Events sorted by (track, start). ``link[i]`` is the launch/kernel partner of event i or -1."""

    t0_ns: int
    span_us: float
    names: list[str]
    cats: list[str]
    tracks: list[Track]
    tree: list[TreeNode]
    track: np.ndarray  # int32
    start_us: np.ndarray  # float64
    dur_us: np.ndarray  # float32
    name: np.ndarray  # int32 into names
    cat: np.ndarray  # uint8 into cats
    link: np.ndarray  # int32 event index or -1
    corr: np.ndarray  # int32 correlation id or -1
    fields: dict[str, np.ndarray]  # extra per-event columns shown in the selection panel (-1 = none)
    counters: list[Counter]
    # {"name": "ProfilerStep#3" or "step_3", "number": 3, "start": us, "end": us}; with several ranks "start"/"end"
    # span the step on every rank and "ranks" lists [{"rank", "start", "end"}]
    steps: list[dict[str, Any]]

    def __len__(self) -> int:
        return len(self.track)


class _Builder:
    def __init__(self) -> None:
        self.tracks: list[Track] = []
        self.roots: list[TreeNode] = []
        self.by_path: dict[str, int] = {}

    def root(self, label: str) -> TreeNode:
        for r in self.roots:
            if r.label == label:
                return r
        node = TreeNode(label)
        self.roots.append(node)
        return node

    def track(self, parent: TreeNode, parents: list[str], label: str, kind: str = "slices") -> int:
        path = " / ".join([*parents, label])
        if path not in self.by_path:
            self.by_path[path] = len(self.tracks)
            self.tracks.append(Track(label, path, kind))
            parent.children.append(TreeNode(label, track=self.by_path[path]))
        return self.by_path[path]


def _host_of(rank: S.RankTrace) -> str:
    return rank.meta.host or "algo-1"


def _t0_ns(profile: S.Profile) -> int:
    starts = [int(r["ts_ns"][0]) for r in profile.ranks.values() if len(r)]
    if profile.counters is not None and profile.counters.num_rows:
        import pyarrow.compute as pc

        starts.append(int(pc.min(profile.counters["ts_ns"]).as_py()))
    return min(starts) if starts else 0


def build_timeline(profile: S.Profile) -> TimelineModel:
    """Arrange every event and counter of ``profile`` into the host -> device tree."""
    b = _Builder()
    t0 = _t0_ns(profile)
    names: dict[str, int] = {}
    cats: dict[str, int] = {}
    parts: dict[str, list[np.ndarray]] = {k: [] for k in ("track", "ts", "dur", "name", "cat", "corr", "ext", "bytes", "rank_row")}
    offsets = []  # (rank, global offset) to map per-rank rows to global rows for links
    total = 0
    memory: list[tuple[int, S.RankTrace]] = []  # each rank's memory samples: counter tracks, not slices
    steps_of_rank: dict[int, list[dict[str, Any]]] = {}
    for r in sorted(profile.ranks):
        rank = profile.ranks[r]
        samples = rank.mask_cat(S.CAT_MEMORY_SAMPLE)
        if samples.any():
            memory.append((r, rank))
            rank = S.RankTrace(meta=rank.meta, columns={k: v[~samples] for k, v in rank.columns.items()},
                               names=rank.names, cats=rank.cats, dtypes=rank.dtypes)
        n = len(rank)
        if n == 0:
            continue
        host = _host_of(rank)
        root = b.root(host)
        col = rank.columns
        cat_names = list(rank.cats)
        name_map = np.array([names.setdefault(x, len(names)) for x in rank.names], dtype=np.int32)
        cat_map = np.array([cats.setdefault(x, len(cats)) for x in cat_names], dtype=np.uint8)
        cat_id = col["cat_id"]
        device = col["device"].astype(np.int64)
        stream = col["stream"].astype(np.int64)
        # Kineto gives gpu_user_annotation no device/stream args; its pid/tid are the device/stream
        no_dev = rank.mask_cat(*S.GPU_CATEGORIES) & (device < 0) & (col["pid"] >= 0) & (col["pid"] < 64)
        device[no_dev] = col["pid"][no_dev]
        stream[no_dev] = col["tid"][no_dev]
        corr = col["correlation"]
        track_of = np.full(n, -1, dtype=np.int32)

        gpu_mask = rank.mask_cat(*S.GPU_CATEGORIES) & (device >= 0)
        hostside = rank.mask_cat(*HOST_SIDE_GPU_CATS)
        primary = int(np.bincount(device[gpu_mask]).argmax()) if gpu_mask.any() else None

        # device tracks: one per (device, stream)
        if gpu_mask.any():
            keys = device[gpu_mask] * 1_000_003 + stream[gpu_mask]
            uniq, inv = np.unique(keys, return_inverse=True)
            ids = []
            for key in uniq:
                d, s = int(key // 1_000_003), int(key % 1_000_003)
                if s > 1_000_003 // 2:  # negative stream wrapped by the modulo
                    d, s = d + 1, s - 1_000_003
                gnode = root.child("GPUs").child(f"GPU {d} (rank {r})")
                label = f"stream {s}" if s >= 0 else "sync"
                ids.append(b.track(gnode, [host, "GPUs", gnode.label], label))
            track_of[gpu_mask] = np.array(ids, dtype=np.int32)[inv]

        # host side of each GPU: runtime launches go to the device their GPU activity ran on
        if primary is not None and hostside.any():
            launch_dev = np.full(n, primary, dtype=np.int64)
            gpu_corr = gpu_mask & (corr >= 0)
            if gpu_corr.any():
                order = np.argsort(corr[gpu_corr], kind="stable")
                sorted_corr = corr[gpu_corr][order]
                sorted_dev = device[gpu_corr][order]
                hc = hostside & (corr >= 0)
                pos = np.searchsorted(sorted_corr, corr[hc])
                pos = np.clip(pos, 0, len(sorted_corr) - 1)
                hit = sorted_corr[pos] == corr[hc]
                ld = launch_dev[hc]
                ld[hit] = sorted_dev[pos[hit]]
                launch_dev[hc] = ld
            for d in np.unique(launch_dev[hostside]):
                gnode = root.child("GPUs").child(f"GPU {int(d)} (rank {r})")
                tid = b.track(gnode, [host, "GPUs", gnode.label], "host")
                track_of[hostside & (launch_dev == d)] = tid

        # everything else: CPU threads of the host
        rest = track_of < 0
        if rest.any():
            cpu = root.child("CPU")
            tids = col["tid"][rest]
            pids = col["pid"][rest]
            keys = np.stack([pids, tids], axis=1)
            uniq, inv = np.unique(keys, axis=0, return_inverse=True)
            one_process = len(np.unique(uniq[:, 0])) == 1  # once, not per thread: linear in threads
            ids = [b.track(cpu, [host, "CPU"], f"rank {r} thread {int(t)}" + ("" if one_process else f" (pid {int(p)})"))
                   for p, t in uniq.tolist()]
            track_of[rest] = np.array(ids, dtype=np.int32)[inv.reshape(-1)]

        parts["track"].append(track_of)
        parts["ts"].append(col["ts_ns"])
        parts["dur"].append(col["dur_ns"])
        parts["name"].append(name_map[col["name_id"]])
        parts["cat"].append(cat_map[cat_id])
        parts["corr"].append(corr)
        parts["ext"].append(col["external_id"])
        parts["bytes"].append(col["bytes"])
        parts["rank_row"].append(np.full(n, r, dtype=np.int32))
        offsets.append((total, corr, gpu_mask, hostside & (corr >= 0)))
        total += n
        steps_of_rank[r] = _steps(rank, t0)

    steps = _steps_side_by_side(steps_of_rank)
    counters = _counter_tracks(profile, b, t0) + [c for r, rank in memory for c in _memory_tracks(r, rank, b, t0)]
    _order_tree(b)
    cat_list = list(cats)
    if total == 0:
        empty = np.zeros(0)
        return TimelineModel(t0, _span(empty, empty, counters), list(names), cat_list, b.tracks,
                             b.roots, empty.astype(np.int32), empty, empty.astype(np.float32),
                             empty.astype(np.int32), empty.astype(np.uint8), empty.astype(np.int32),
                             empty.astype(np.int32), {}, counters, steps)

    track = np.concatenate(parts["track"])
    start = (np.concatenate(parts["ts"]) - t0) / 1e3
    dur = np.concatenate(parts["dur"]) / 1e3
    # links, in pre-sort row numbers: launch row <-> GPU row with the same correlation in the same rank
    link_pre = np.full(total, -1, dtype=np.int64)
    for off, corr, gpu_mask, launch_mask in offsets:
        g_rows = np.flatnonzero(gpu_mask & (corr >= 0))
        l_rows = np.flatnonzero(launch_mask)
        if not len(g_rows) or not len(l_rows):
            continue
        order = np.argsort(corr[g_rows], kind="stable")
        g_sorted = g_rows[order]
        pos = np.clip(np.searchsorted(corr[g_sorted], corr[l_rows]), 0, len(g_sorted) - 1)
        hit = corr[g_sorted[pos]] == corr[l_rows]
        link_pre[off + l_rows[hit]] = off + g_sorted[pos[hit]]
        link_pre[off + g_sorted[pos[hit]]] = off + l_rows[hit]

    order = np.lexsort((-dur, start, track))  # by track, then start; longer first so parents precede children
    rank_of = np.empty(total, dtype=np.int64)
    rank_of[order] = np.arange(total)
    link = np.where(link_pre[order] >= 0, rank_of[np.maximum(link_pre[order], 0)], -1).astype(np.int32)
    corr_all = np.concatenate(parts["corr"])[order]
    fields = {
        "rank": np.concatenate(parts["rank_row"])[order],
        "external_id": np.concatenate(parts["ext"])[order],
    }
    bytes_all = np.concatenate(parts["bytes"])[order]
    if (bytes_all >= 0).any():
        fields["bytes"] = bytes_all
    return TimelineModel(
        t0_ns=t0,
        span_us=_span(start, dur, counters),
        names=list(names),
        cats=cat_list,
        tracks=b.tracks,
        tree=b.roots,
        track=track[order].astype(np.int32),
        start_us=start[order],
        dur_us=dur[order].astype(np.float32),
        name=np.concatenate(parts["name"])[order],
        cat=np.concatenate(parts["cat"])[order],
        link=link,
        corr=np.where(corr_all > np.iinfo(np.int32).max, -1, corr_all).astype(np.int32),
        fields=fields,
        counters=counters,
        steps=steps,
    )


def _order_tree(b: _Builder) -> None:
    """CPU before GPUs under a host; in a GPU: host track, then counters, then streams (stable)."""
    def rank(c: TreeNode) -> int:
        if c.track is None:
            return {"CPU": 0, "GPUs": 1}.get(c.label, 2)
        if c.label == "host":
            return 0
        return 1 if b.tracks[c.track].kind == "counter" else 2

    def visit(node: TreeNode) -> None:
        node.children.sort(key=rank)
        for c in node.children:
            visit(c)

    for root in b.roots:
        visit(root)


def _span(start: np.ndarray, dur: np.ndarray, counters: list[Counter]) -> float:
    ends = [float((start + dur).max())] if len(start) else []
    ends += [float(c.t_us.max()) for c in counters if len(c.t_us)]
    return max(ends) if ends else 1.0


def _steps(rank: S.RankTrace, t0: int) -> list[dict[str, Any]]:
    """Step windows from ProfilerStep#N or step_N annotations, named as their bars are (ProfilerStep#103); without
    any, the steps the analysis finds (profiler/analysis/loop.py: one per optimizer.step, numbered as the findings
    number them), so "go to the slowest step" and a finding's "open the timeline at step N" work on plain loops."""
    ann = rank.mask_cat(S.CAT_USER_ANNOTATION, S.CAT_CPU_OP)
    out = []
    for code, nm in enumerate(rank.names):
        for pat in STEP_PATTERNS:
            m = pat.match(nm)
            if not m:
                continue
            rows = np.flatnonzero(ann & (rank["name_id"] == code))
            for row in rows[:1]:
                s = (int(rank["ts_ns"][row]) - t0) / 1e3
                out.append({"name": nm, "number": int(m.group(1)), "start": s, "end": s + int(rank["dur_ns"][row]) / 1e3})
    if not out:
        out = _loop_steps(rank, t0)
    out.sort(key=lambda s: cast(float, s["start"]))
    return out


def _loop_steps(rank: S.RankTrace, t0: int) -> list[dict[str, Any]]:
    """A step per optimizer step, from the previous one's end to its own (the loop's cycles)."""
    found = step_boundaries(rank)
    if found is None:
        return []
    _, numbers, starts, _, cycle_ends = found
    return [{"name": f"optimizer step {n}", "number": int(n), "start": (int(s) - t0) / 1e3, "end": (int(e) - t0) / 1e3}
            for n, s, e in zip(numbers.tolist(), starts.tolist(), cycle_ends.tolist())]


def _steps_side_by_side(steps_of_rank: dict[int, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The first rank's steps; with several ranks, each step spans the same step on every rank (so going to it shows
    them side by side) and lists each rank's own window under "ranks"."""
    ranks = [r for r in sorted(steps_of_rank) if steps_of_rank[r]]
    if not ranks:
        return []
    steps = [dict(s) for s in steps_of_rank[ranks[0]]]
    if len(ranks) < 2:
        return steps
    by_name = {r: {s["name"]: s for s in steps_of_rank[r]} for r in ranks}
    for step in steps:
        windows = [{"rank": r, "start": by_name[r][step["name"]]["start"], "end": by_name[r][step["name"]]["end"]}
                   for r in ranks if step["name"] in by_name[r]]
        step["ranks"] = windows
        step["start"], step["end"] = min(w["start"] for w in windows), max(w["end"] for w in windows)
    return steps


def _counter_tracks(profile: S.Profile, b: _Builder, t0: int) -> list[Counter]:
    if profile.counters is None or profile.counters.num_rows == 0:
        return []
    table = profile.counters
    ts = table["ts_ns"].to_numpy()
    hosts = table["host"].to_pylist()
    metrics = table["metric"].to_pylist()
    index = table["index"].to_numpy()
    values = table["value"].to_numpy().astype(np.float32)
    keys: dict[tuple[str, str, int], list[int]] = {}
    for i, key in enumerate(zip(hosts, metrics, index.tolist())):
        keys.setdefault(key, []).append(i)
    out = []
    for (host, metric, idx), rows in sorted(keys.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        rows_a = np.array(rows)
        rows_a = rows_a[np.argsort(ts[rows_a], kind="stable")]
        root = b.root(host or "algo-1")
        unit, vmax = "%", 100.0
        if metric in (S.METRIC_CPU_UTIL, S.METRIC_HOST_MEM_UTIL):
            parent = root.child("CPU")
            parents = [root.label, "CPU"]
            if metric == S.METRIC_HOST_MEM_UTIL:
                label = "host memory %"
            elif idx < 0:
                label = "CPU utilisation %"
            else:
                parent = parent.child("cores")
                parents.append("cores")
                label = f"core {idx} %"
        else:
            gnode = _gpu_node(root.child("GPUs"), idx)
            parent, parents = gnode, [root.label, "GPUs", gnode.label]
            label = {S.METRIC_GPU_UTIL: "utilisation %", S.METRIC_GPU_MEM_UTIL: "memory util %"}.get(metric, "memory used")
            if metric == S.METRIC_GPU_MEM_USED:
                unit, vmax = " B", float(values[rows_a].max() or 1.0)
        tid = b.track(parent, parents, label, kind="counter")
        out.append(Counter(tid, (ts[rows_a] - t0) / 1e3, values[rows_a], unit, vmax))
    return out


def _memory_tracks(r: int, rank: S.RankTrace, b: _Builder, t0: int) -> list[Counter]:
    """The process's memory samples of one rank (RSS, CUDA allocated/reserved), in MiB, each scaled to its own peak."""
    sel = rank.mask_cat(S.CAT_MEMORY_SAMPLE)
    root = b.root(_host_of(rank))
    out = []
    for code in sorted(set(rank["name_id"][sel].tolist())):
        rows = np.flatnonzero(sel & (rank["name_id"] == code))
        mib = (rank["bytes"][rows] / 2**20).astype(np.float32)
        label = f"rank {r} {rank.names[code].replace('_', ' ')}"
        tid = b.track(root.child("CPU"), [root.label, "CPU"], label, kind="counter")
        out.append(Counter(tid, (rank["ts_ns"][rows] - t0) / 1e3, mib, " MiB", round(float(mib.max() or 1.0), 1)))
    return out


def _gpu_node(gpus: TreeNode, device: int) -> TreeNode:
    """The GPU's node, whether the events named it "GPU d (rank r)" or not."""
    for c in gpus.children:
        if c.track is None and (c.label == f"GPU {device}" or c.label.startswith(f"GPU {device} (")):
            return c
    return gpus.child(f"GPU {device}")
