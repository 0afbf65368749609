"""The profile data model: the on-disk artifact and the in-memory per-rank tables.

Schema version: ``SCHEMA_VERSION`` ("sagelaunch.profile/1"). Readers accept every version whose major number
they know; writers always write the current one. Any change that removes/renames a column bumps the major.

Artifact layout (under ``output/profiler/``, i.e. ``SM_PROFILER_OUTPUT_DIR``)::

    <host>/system-<seq:04d>.parquet        counters table: CPU per core / GPU per device utilisation over time
                                           (written by ``python -m sagelaunch.profiler.monitor``, one file per rotation)
    <host>/rank-<R>/trace-<seq:04d>.parquet events table of rank R: Kineto activity + our annotations
                                           (one file per SMPFileRotationSecs window)

Every file is Parquet (zstd, dictionary-encoded strings, integer nanosecond times), readable with
``pandas.read_parquet``, ``polars.read_parquet`` and ``duckdb.sql("select * from 'x.parquet'")``.
The Parquet key-value metadata holds ``sagelaunch.schema`` = SCHEMA_VERSION and ``sagelaunch.meta`` =
JSON of :class:`TraceMeta` (rank, host, world_size, device names…).

EVENTS table (one row per complete event; Chrome 'X' phase and Kineto activities):

============== ========= ====================================================================================
column         type      meaning
============== ========= ====================================================================================
ts_ns          int64     start in nanoseconds: epoch ns for our artifacts and for Kineto traces that carry
                         baseTimeNanoseconds (ts × 1000 + base); older Kineto traces: their µs × 1000
dur_ns         int64     duration in ns (0 for instants)
name           dict str  event name (kernel name, op name, annotation name, "ProfilerStep#3"…)
cat            dict str  category, Kineto's spelling: one of CATEGORIES (unknown ones are kept verbatim)
pid            int64     process id; for GPU activity Kineto uses the device index here
tid            int64     thread id; for GPU activity the stream id
device         int16     GPU index for GPU activity (kernel, gpu_memcpy, gpu_memset, cuda_sync,
                         gpu_user_annotation), -1 for host events
stream         int64     CUDA/HIP stream for GPU activity, -1 for host events (Kineto writes 4294967295
                         for device-wide syncs; kept as is, as HTA does)
correlation    int64     links a runtime launch (cuda_runtime/cuda_driver) to its GPU activity; -1 if none
external_id    int64     Kineto "External id": links GPU activity / runtime calls to the CPU op; -1 if none
bytes          int64     bytes moved for gpu_memcpy / gpu_memset, the sampled bytes of a memory_sample, -1 otherwise
dtype          dict str  first non-empty "Input type" of a CPU op (precision hints), "" otherwise
============== ========= ====================================================================================

In memory (:class:`RankTrace`), string columns are ``int32`` codes (``name_id``, ``cat_id``, ``dtype_id``)
into the per-rank lists ``names``, ``cats`` and ``dtypes``; every column is a numpy array of equal length,
sorted by ``ts_ns``. ``RankTrace.to_arrow()`` gives the same table with pyarrow dictionary columns.

COUNTERS table (long format; one row per sample and per series):

============== ========= ====================================================================================
ts_ns          int64     sample time, epoch nanoseconds
host           dict str  "algo-1"…
metric         dict str  one of METRICS
index          int32     CPU core / GPU device index; -1 for whole-host aggregates
value          float32   percent for *_util metrics, bytes for gpu_mem_used
============== ========= ====================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SCHEMA_VERSION = "sagelaunch.profile/1"
SCHEMA_MAJOR = 1

# Kineto categories we interpret; others pass through unchanged.
CAT_CPU_OP = "cpu_op"
CAT_USER_ANNOTATION = "user_annotation"
CAT_GPU_USER_ANNOTATION = "gpu_user_annotation"
CAT_CUDA_RUNTIME = "cuda_runtime"
CAT_CUDA_DRIVER = "cuda_driver"
CAT_KERNEL = "kernel"
CAT_GPU_MEMCPY = "gpu_memcpy"
CAT_GPU_MEMSET = "gpu_memset"
CAT_CUDA_SYNC = "cuda_sync"
CAT_PYTHON = "python_function"
# sagelaunch's own: spans of the torch hooks (profiler/torch_hooks.py: HOOK_OPTIMIZER_STEP, HOOK_DATALOADER_NEXT),
# and memory samples (dur 0, the value in bytes: SAMPLE_RSS, SAMPLE_CUDA_ALLOCATED, SAMPLE_CUDA_RESERVED)
CAT_HOOK = "sagelaunch_hook"
CAT_MEMORY_SAMPLE = "memory_sample"
HOOK_OPTIMIZER_STEP = "optimizer.step"
HOOK_DATALOADER_NEXT = "DataLoader.__next__"
SAMPLE_RSS = "process_rss"
SAMPLE_CUDA_ALLOCATED = "cuda_allocated"
SAMPLE_CUDA_RESERVED = "cuda_reserved"
CATEGORIES = (
    CAT_CPU_OP,
    CAT_USER_ANNOTATION,
    CAT_GPU_USER_ANNOTATION,
    CAT_CUDA_RUNTIME,
    CAT_CUDA_DRIVER,
    CAT_KERNEL,
    CAT_GPU_MEMCPY,
    CAT_GPU_MEMSET,
    CAT_CUDA_SYNC,
    CAT_PYTHON,
    CAT_HOOK,
    CAT_MEMORY_SAMPLE,
)
GPU_CATEGORIES = (CAT_KERNEL, CAT_GPU_MEMCPY, CAT_GPU_MEMSET, CAT_CUDA_SYNC, CAT_GPU_USER_ANNOTATION)

# Counter metrics.
METRIC_CPU_UTIL = "cpu_util"  # percent busy of one core (index = core) or of the host (index = -1)
METRIC_GPU_UTIL = "gpu_util"  # NVML utilization.gpu percent (index = device)
METRIC_GPU_MEM_UTIL = "gpu_mem_util"  # NVML utilization.memory percent
METRIC_GPU_MEM_USED = "gpu_mem_used"  # bytes used on the device
METRIC_HOST_MEM_UTIL = "host_mem_util"  # percent of host RAM used (index = -1)
METRICS = (METRIC_CPU_UTIL, METRIC_GPU_UTIL, METRIC_GPU_MEM_UTIL, METRIC_GPU_MEM_USED, METRIC_HOST_MEM_UTIL)

EVENT_INT_COLUMNS = {
    "ts_ns": "int64",
    "dur_ns": "int64",
    "pid": "int64",
    "tid": "int64",
    "device": "int16",
    "stream": "int64",
    "correlation": "int64",
    "external_id": "int64",
    "bytes": "int64",
}
EVENT_STRING_COLUMNS = ("name", "cat", "dtype")  # dictionary-encoded (in memory: <col>_id + list)
COUNTER_COLUMNS = {"ts_ns": "int64", "host": "dict", "metric": "dict", "index": "int32", "value": "float32"}

META_KEY_SCHEMA = b"sagelaunch.schema"
META_KEY_META = b"sagelaunch.meta"


@dataclass
class TraceMeta:
    """Per-rank facts from the trace header (Kineto) or our writer."""

    rank: int = 0
    world_size: int | None = None
    host: str | None = None
    source: str = ""  # file(s) it came from
    kind: str = "kineto"  # "kineto" | "sagelaunch"
    device_names: dict[int, str] = field(default_factory=dict)
    backend: str | None = None  # distributed backend (nccl/gloo)
    warnings: list[str] = field(default_factory=list)  # what was skipped/repaired while loading
    float_us: bool = False  # Kineto source had fractional-µs timestamps (analysis rounds as HTA does)
    base_ns: int = 0  # Kineto's baseTimeNanoseconds, already added to ts_ns (ts_ns is then epoch ns)
    # job settings the events cannot tell (SMP pipeline_parallel_degree, microbatches), recorded at capture time;
    # see profiler/job_settings.py. Additive: readers of schema 1 without it ignore the key.
    job_settings: dict[str, int] = field(default_factory=dict)
    # when framework operators were recorded, for a duty cycle (Config.cpu_ops_steps of cpu_ops_every_steps):
    # {"steps": K, "every_steps": N, "recorded_ns": [[start, end], ...]}; {} when the source does not say
    # (Kineto traces, older artifacts: operators, if any, cover the whole trace). Additive, like job_settings.
    cpu_ops: dict[str, Any] = field(default_factory=dict)
    # [start, end] ns in which our writer thread converted an earlier window while training ran: steps then may
    # be slowed by it (step_outlier leaves them out). Each file lists the spans since the previous file. Additive.
    profiler_busy_ns: list = field(default_factory=list)
    # [start, end] ns of each profiling cycle when the loader joined one rank's files of several cycles
    # (profiler/cycles.py); [] for one file. Known at load time only: not written to artifacts.
    cycles_ns: list = field(default_factory=list)

    @property
    def cpu_ops_sampled(self) -> bool:
        """Operators were recorded in some steps only: operator totals cover those steps, not the run."""
        c = self.cpu_ops
        return bool(c) and int(c.get("steps", 0)) < int(c.get("every_steps", 0))

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "world_size": self.world_size,
            "host": self.host,
            "source": self.source,
            "kind": self.kind,
            "device_names": {str(k): v for k, v in self.device_names.items()},
            "backend": self.backend,
            "warnings": list(self.warnings),
            "float_us": self.float_us,
            "base_ns": self.base_ns,
            "job_settings": dict(self.job_settings),
            **({"cpu_ops": self.cpu_ops} if self.cpu_ops else {}),
            **({"profiler_busy_ns": self.profiler_busy_ns} if self.profiler_busy_ns else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TraceMeta":
        return cls(
            rank=int(d.get("rank") or 0),
            world_size=d.get("world_size"),
            host=d.get("host"),
            source=d.get("source", ""),
            kind=d.get("kind", "sagelaunch"),
            device_names={int(k): v for k, v in (d.get("device_names") or {}).items()},
            backend=d.get("backend"),
            warnings=list(d.get("warnings") or []),
            float_us=bool(d.get("float_us", False)),
            base_ns=int(d.get("base_ns") or 0),
            job_settings=d["job_settings"] if isinstance(d.get("job_settings"), dict) else {},
            cpu_ops=d["cpu_ops"] if isinstance(d.get("cpu_ops"), dict) else {},
            profiler_busy_ns=d["profiler_busy_ns"] if isinstance(d.get("profiler_busy_ns"), list) else [],
        )


@dataclass
class RankTrace:
    """The events of one rank as equal-length numpy columns (see EVENTS above), sorted by ts_ns.

    ``names[name_id[i]]`` is the name of event i; likewise ``cats``/``cat_id`` and ``dtypes``/``dtype_id``.
    """

    meta: TraceMeta
    columns: dict[str, Any]  # column name -> numpy array (int columns and name_id/cat_id/dtype_id)
    names: list[str]
    cats: list[str]
    dtypes: list[str]
    # positions, in the sorted columns, of the events in their source file's order (None: already that order).
    # HTA sorts with an unstable quicksort, so matching it exactly needs the source order of ties.
    source_order: Any = None

    def __len__(self) -> int:
        return len(self.columns["ts_ns"])

    def __repr__(self) -> str:
        return f"RankTrace(rank={self.meta.rank}, events={len(self)}, cats={self.cats}, source={self.meta.source!r})"

    def __getitem__(self, col: str):
        return self.columns[col]

    def cat_code(self, cat: str) -> int:
        """Code of a category in this rank, -1 when the rank has no such events."""
        try:
            return self.cats.index(cat)
        except ValueError:
            return -1

    def mask_cat(self, *cats: str):
        import numpy as np

        codes = [c for c in (self.cat_code(x) for x in cats) if c >= 0]
        if not codes:
            return np.zeros(len(self), dtype=bool)
        wanted = np.zeros(len(self.cats), dtype=bool)  # one gather through a per-category table: ~5x faster
        wanted[codes] = True                              # than a sorted-search isin over every event
        return wanted[self.columns["cat_id"]]

    def to_arrow(self):
        """The events as a pyarrow Table with dictionary-encoded name/cat/dtype (the artifact's schema)."""
        import pyarrow as pa

        arrays, fields = [], []
        for col, typ in EVENT_INT_COLUMNS.items():
            arrays.append(arrow_array(self.columns[col], typ))
            fields.append(pa.field(col, getattr(pa, typ)()))
        for col, values in (("name", self.names), ("cat", self.cats), ("dtype", self.dtypes)):
            arr = pa.DictionaryArray.from_arrays(
                arrow_array(self.columns[col + "_id"], "int32"), arrow_strings(values)
            )
            arrays.append(arr)
            fields.append(pa.field(col, arr.type))
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields))

    def to_pandas(self):
        return self.to_arrow().to_pandas()


def arrow_array(values, typ: str):
    """A pyarrow array over a numpy column's buffer. pa.array() on numpy arrays or lists imports pandas (+50 MB RSS
    and ~0.5 s of CPU in the training process, measured at the first window write); from_buffers does not."""
    import numpy as np
    import pyarrow as pa

    data = np.ascontiguousarray(values, dtype=typ)
    return pa.Array.from_buffers(getattr(pa, typ)(), len(data), [None, pa.py_buffer(data)])


def arrow_strings(values: list[str]):
    """A pyarrow string array built from its buffers (see arrow_array: no pandas import)."""
    import numpy as np
    import pyarrow as pa

    encoded = [str(v).encode("utf-8", "surrogatepass") for v in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)  # a dictionary of distinct names: far below 2 GiB
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    return pa.Array.from_buffers(pa.string(), len(encoded), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))])


def drop_negative_durations(cols: dict, names: list, meta: TraceMeta) -> dict:
    """Events with a negative duration would count as negative busy time (compute −50 %, idle 150 %): they are
    dropped, and a warning says how many."""
    import numpy as np

    bad = cols["dur_ns"] < 0
    if not bad.any():
        return cols
    i = int(np.flatnonzero(bad)[0])
    meta.warnings.append(
        f"{meta.source}: skipped {int(bad.sum())} event(s) with a negative duration "
        f"(first: {names[cols['name_id'][i]]!r}, dur {cols['dur_ns'][i] / 1000:g} µs); a duration is ≥ 0"
    )
    keep = ~bad
    return {k: v[keep] for k, v in cols.items()}


@dataclass
class Profile:
    """Everything loaded from one path: per-rank event tables and per-host counters."""

    ranks: dict[int, RankTrace]
    counters: Any = None  # pyarrow Table with COUNTER_COLUMNS, or None
    source: str = ""
    warnings: list[str] = field(default_factory=list)

    def counters_pandas(self):
        return None if self.counters is None else self.counters.to_pandas()
