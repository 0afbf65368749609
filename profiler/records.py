"""The analysis result's records, typed: what `profile analyze --json` prints and the report and the browser read.

They are TypedDicts, so the result stays the plain JSON-ready dict every view already reads, while each record's
fields, their types and their meaning are written down once here; tests/profiler/test_records.py checks every
analysis of the reference traces and of the labelled set against them (msgspec.convert, strict). Times are µs unless
a field's name says otherwise. Sections typed as ``dict[str, Any]`` are the dashboard's metrics, described in
profiler/analysis/metrics.py.
"""

from __future__ import annotations

from typing import Any, Literal, Optional, TypedDict, Union

Number = Union[int, float]
Evidence = Union[int, float, str, bool, None]


class Finding(TypedDict, total=False):
    rule: str  # the rule's name (profiler/findings): input_bound, step_outlier, …
    severity: Literal["high", "medium", "low"]
    summary: str  # the problem in one sentence, with its number
    evidence: dict[str, Evidence]  # the numbers behind it, by name (ms, shares 0–1, counts, step numbers)
    fix: str  # the setting to change, specific to the evidence
    rank: str  # the rank it concerns; absent when it concerns the job or a host


class Figure(TypedDict, total=False):
    key: str  # stable identifier (gpu_idle, step_cycle, memory:process_rss, …)
    label: str  # what it measures and over which window
    value: Number  # the number, in `unit`
    unit: str
    text: str  # the number as every view prints it
    rank: str  # its rank, or
    host: str  # its host


class Temporal(TypedDict):
    """HTA's temporal breakdown of the GPU span."""
    idle_us: float
    compute_us: float
    non_compute_us: float
    span_us: float
    idle_pct: float
    compute_pct: float
    non_compute_pct: float


class IdleWaits(TypedDict):
    host_wait_us: float  # the GPU waited for the host to launch (its launch began after the previous kernel ended)
    kernel_wait_us: float  # gaps under 30 µs between back-to-back kernels
    other_us: float  # synchronisation, waits on other streams


class IdleBreakdown(IdleWaits):
    """HTA's get_idle_time_breakdown, summed over streams, and per stream."""
    streams: dict[str, dict[str, float]]


class QueueSummary(TypedDict):
    mean: float
    max: int
    count: int  # points of the series


class Queue(TypedDict):
    """HTA's queue length: kernels launched and not yet started, per stream."""
    mean: float
    max: int
    streams: dict[str, QueueSummary]


class Overlap(TypedDict):
    """HTA's get_comm_comp_overlap."""
    communication_us: float
    overlapped_us: float
    comp_comm_overlap_pct: float
    top_kernel: str  # the communication kernel with the most time (its collective names low_overlap's fix)


class LoopMeans(TypedDict, total=False):
    """Mean µs per judged step; input figures over `input_steps`; phases only when annotated/hooked."""
    cycle: float
    input: float
    input_cycle: float
    input_between_steps: float
    input_inside_steps: float
    forward: float
    backward: float
    optimizer: float


class Loop(TypedDict):
    """The training loop (profiler/analysis/loop.py)."""
    source: str  # "step annotations", "optimizer.step hooks" or "Optimizer.step operators"
    count: int  # steps found
    judged: int  # steps the findings judge (warm-up and profiler-slowed ones left out)
    warmup_steps: int
    slowed_by_profiler: int
    input_source: Optional[str]  # "DataLoader hooks", "DataLoader operators" or None
    input_steps: int
    phases: list[str]
    step: list[int]
    start_us: list[float]  # from the first step's start
    cycle_us: list[float]  # start to next start
    annotated_us: list[float]  # the step annotation's own duration (the cycle's end for hook-found steps)
    input_us: list[float]
    judged_mask: list[bool]
    mean_us: LoopMeans
    total_judged_us: float


class MemorySeries(TypedDict):
    t_s: list[float]  # seconds from the first sample
    bytes: list[int]
    samples: int


class RankAnalysis(TypedDict):
    temporal: Optional[Temporal]
    kernel_types: Optional[dict[str, float]]  # HTA's kernel-type sweep: label → µs
    overlap: Optional[Overlap]
    top_kernels: list[dict[str, Any]]
    launch: dict[str, Any]  # HTA's launch statistics; "queue": Queue or None
    idle_breakdown: Optional[IdleBreakdown]
    kernels: dict[str, Any]
    gpu_activity: dict[str, Any]
    memory_ops: dict[str, Any]
    precision: dict[str, float]
    steps: Optional[dict[str, Any]]
    step_breakdown: Optional[dict[str, Any]]
    loop: Optional[Loop]
    compiled: bool  # torch.compile at work in the trace
    memory: dict[str, MemorySeries]  # process_rss, cuda_allocated, cuda_reserved
    cpu_ops_sampled: Optional[dict[str, Any]]
    annotations: list[dict[str, Any]]
    cpu: Optional[dict[str, Any]]
    gpu_utilization: dict[str, Any]
    events: int
    devices: dict[str, str]
    source: str
    notes: list[str]


class RankColumn(TypedDict):
    key: str
    label: str
    unit: str


class RanksCompared(TypedDict):
    """The ranks side by side (ranks_compared.py)."""
    columns: list[RankColumn]
    rows: list[dict[str, Union[str, Number]]]  # {"rank": "0", column key: value}
    largest: dict[str, str]  # column key → the rank with the largest value


class AnalysisResult(TypedDict):
    ranks: dict[str, RankAnalysis]
    hosts: dict[str, Any]  # sampled utilisation per host (counters.py)
    warnings: list[str]
    source: str
    context: dict[str, Any]  # job settings the findings use (pipeline_parallel_degree, microbatches)
    ranks_compared: Optional[RanksCompared]
    figures: list[Figure]
    findings: list[Finding]


def check(result: dict) -> AnalysisResult:
    """The result, validated against the records (msgspec.convert, strict); a mismatch raises msgspec.ValidationError
    naming the field's path."""
    import msgspec

    return msgspec.convert(result, AnalysisResult, strict=True)
