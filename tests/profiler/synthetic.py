"""Small synthetic profiles written with the artifact writer, for cases the real traces lack.

`healthy()` is a job none of the findings' rules should fire on: steps of Forward/Backward/Optimizer annotations
with kernels packed back to back on one stream. Each test changes one thing and writes the profile as our
Parquet artifact (profiler.artifact), so the analysis reads it exactly as it reads a job's output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from sagelaunch.profiler import artifact
from sagelaunch.profiler.schema import EVENT_INT_COLUMNS, RankTrace, TraceMeta

MS = 1_000_000  # ns
T0 = 1_700_000_000_000_000_000


@dataclass
class Rank:
    rank: int = 0
    events: list[tuple] = field(default_factory=list)  # (name, cat, ts_ns, dur_ns, stream, correlation)
    cpu_ops: dict = field(default_factory=dict)  # TraceMeta.cpu_ops: when a duty cycle recorded operators
    profiler_busy_ns: list = field(default_factory=list)  # TraceMeta.profiler_busy_ns: when our writer ran
    _corr: int = 1

    def add(self, name: str, cat: str, ts: int, dur: int, stream: int = -1, correlation: int = -1) -> None:
        self.events.append((name, cat, int(ts), int(dur), stream, correlation))

    def kernel(self, name: str, ts: int, dur: int, stream: int = 7, launch_at: int | None = None) -> None:
        """A kernel and the runtime call that launched it (a few µs before, linked by correlation)."""
        corr = self._corr
        self._corr += 1
        at = ts - 20_000 if launch_at is None else launch_at
        self.add("cudaLaunchKernel", "cuda_runtime", at, 5_000, -1, corr)
        self.add(name, "kernel", ts, dur, stream, corr)

    def trace(self, host: str = "algo-1") -> RankTrace:
        ev = sorted(self.events, key=lambda e: e[2])
        n = len(ev)

        def encode(values):
            table = {v: i for i, v in enumerate(dict.fromkeys(values))}
            return np.array([table[v] for v in values], dtype=np.int32), list(table)

        name_id, names = encode([e[0] for e in ev])
        cat_id, cats = encode([e[1] for e in ev])
        cols = {c: np.full(n, -1, dtype=t) for c, t in EVENT_INT_COLUMNS.items()}
        cols["ts_ns"] = np.array([e[2] for e in ev], dtype=np.int64)
        cols["dur_ns"] = np.array([e[3] for e in ev], dtype=np.int64)
        cols["stream"] = np.array([e[4] for e in ev], dtype=np.int64)
        cols["correlation"] = np.array([e[5] for e in ev], dtype=np.int64)
        cols["device"] = np.where(cols["stream"] >= 0, 0, -1).astype(np.int16)
        cols["pid"][:] = 100 + self.rank
        cols["tid"] = np.where(cols["stream"] >= 0, cols["stream"], 1).astype(np.int64)
        cols.update(name_id=name_id, cat_id=cat_id, dtype_id=np.zeros(n, dtype=np.int32))
        meta = TraceMeta(rank=self.rank, host=host, kind="sagelaunch", source="synthetic", cpu_ops=self.cpu_ops,
                         profiler_busy_ns=self.profiler_busy_ns)
        return RankTrace(meta=meta, columns=cols, names=names, cats=cats, dtypes=[""])


def healthy(rank: int = 0, steps: int = 8, step_ms: float = 100.0, slow: dict[int, float] | None = None,
            busy: float = 0.97, kernel_us: float = 1900.0, loader_ms: float = 0.0, comm: str | None = None) -> Rank:
    """Steps of `step_ms` (step i takes slow[i] ms instead): optional DataLoader wait at the start, then Forward
    40%, Backward 45%, Optimizer the rest; kernels of `kernel_us` fill `busy` of each step's compute time;
    comm="exposed" adds an all-reduce after compute, comm="hidden" one that runs alongside Backward."""
    r = Rank(rank=rank)
    t = T0
    for i in range(1, steps + 1):
        d = int((slow or {}).get(i, step_ms) * MS)
        r.add(f"step_{i}", "user_annotation", t, d)
        load = int(loader_ms * MS)
        if load:
            r.add("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "cpu_op", t, load)
        body = t + load
        work = d - load
        marks = [body, body + int(0.4 * work), body + int(0.85 * work), body + work]
        for name, a, b in zip(("Forward", "Backward", "Optimizer"), marks, marks[1:]):
            r.add(name, "user_annotation", a, b - a)
        k_ns = int(kernel_us * 1000)
        span = int(busy * work) if comm != "exposed" else int(0.6 * work)
        n_k = max(1, span // k_ns)
        gap = (work - n_k * k_ns) // n_k if busy < 0.9 and comm != "exposed" else 0
        ts = body
        for _ in range(n_k):
            r.kernel("void gemm_kernel<float>(float*)", ts, k_ns)
            ts += k_ns + gap
        if comm == "exposed":
            r.kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", ts, int(0.3 * work), stream=13)
        elif comm == "hidden":
            r.kernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", marks[1], int(0.3 * work), stream=13)
        t += d
    return r


def counters(values: list[float], metric: str = "gpu_mem_used", host: str = "algo-1", index: int = 0, span_s: float = 1.0):
    import pyarrow as pa

    ts = (T0 + np.linspace(0, span_s * 1e9, len(values))).astype(np.int64)
    return pa.table({
        "ts_ns": pa.array(ts, pa.int64()),
        "host": pa.array([host] * len(values)).dictionary_encode(),
        "metric": pa.array([metric] * len(values)).dictionary_encode(),
        "index": pa.array([index] * len(values), pa.int32()),
        "value": pa.array(values, pa.float32()),
    })


def write(root: Path, *ranks: Rank, counter_table=None, host: str = "algo-1") -> Path:
    """The profile as a job's profiler output folder: <root>/<host>/rank-R/trace-0000.parquet (+ system file)."""
    for r in ranks:
        artifact.write_events(r.trace(host), root / host / f"rank-{r.rank}" / "trace-0000.parquet")
    if counter_table is not None:
        artifact.write_counters(counter_table, root / host / "system-0000.parquet", {"host": host})
    return root
