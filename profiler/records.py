"""The analysis result's records, typed: what `profile analyze` prints (text and --json), and what the report, the
dashboard and the profile browser read.

Each record is a msgspec.Struct: the findings' rules, the figures and the views read its attributes, and its JSON
(``to_json``, ``msgspec.to_builtins``) has the keys the fields name, in their order. A field with a default (None)
is left out of the JSON when it holds that default: the record's optional parts (a finding's rank, a loop's phases
that were not annotated). A field without one is always written, null when it does not apply (``temporal`` of a
CPU-only rank). Times are µs unless a field's name says otherwise.

The producers (profiler/analysis/*) build plain values and ``convert`` makes them records (msgspec.convert, strict),
so a value that breaks its record fails where it is made, named by its path.
"""

from typing import Any, Literal, Optional, Union

import msgspec

Number = Union[int, float]
# a finding's evidence: numbers by name (ms, shares 0–1, counts, step numbers), words, or a number per rank
Evidence = Union[int, float, str, bool, None, dict[str, float]]


Severity = Literal["high", "medium", "low"]

class Record(msgspec.Struct, kw_only=True, omit_defaults=True):
    """The base of every record: defaults left out of the JSON (inherited); keyword fields (each class says
    kw_only=True again: msgspec applies it to the fields a class defines)."""


# ---------------------------------------------------------------------------------------------------- findings, figures
class Finding(Record, kw_only=True):
    """What to change (profiler/findings)."""
    rule: str  # the rule's name: input_bound, step_outlier, …
    severity: Severity
    summary: str  # the problem in one sentence, with its number
    evidence: dict[str, Evidence]  # the numbers behind it, by name
    fix: str  # the setting to change, specific to the evidence
    rank: Optional[str] = None  # the rank it concerns; absent when it concerns the job or a host


class Figure(Record, kw_only=True):
    """A headline number as every view prints it (profiler/figures.py)."""
    rank: Optional[str] = None  # its rank, or
    host: Optional[str] = None  # its host
    key: str  # stable identifier (gpu_idle, step_cycle, memory:process_rss, …)
    label: str  # what it measures and over which window
    value: Number  # the number, in `unit`
    unit: str
    text: str  # the number as every view prints it


# ------------------------------------------------------------------------------------------- HTA's analyses (gpu_breakdown)
class Temporal(Record, kw_only=True):
    """HTA's temporal breakdown of the GPU span."""
    idle_us: float
    compute_us: float
    non_compute_us: float
    span_us: float
    idle_pct: float
    compute_pct: float
    non_compute_pct: float

    @property
    def idle_share(self) -> Optional[float]:
        """Idle time over the GPU span; None for an empty span."""
        return self.idle_us / self.span_us if self.span_us else None


class IdleWaits(Record, kw_only=True):
    host_wait_us: float  # the GPU waited for the host to launch (its launch began after the previous kernel ended)
    kernel_wait_us: float  # gaps under 30 µs between back-to-back kernels
    other_us: float  # synchronisation, waits on other streams

    @property
    def total_us(self) -> float:
        return self.host_wait_us + self.kernel_wait_us + self.other_us


class IdleBreakdown(IdleWaits, kw_only=True):
    """HTA's get_idle_time_breakdown, summed over streams, and per stream."""
    streams: dict[str, IdleWaits]


class QueueSummary(Record, kw_only=True):
    mean: float
    max: int
    count: int  # points of the series


class Queue(Record, kw_only=True):
    """HTA's queue length: kernels launched and not yet started, per stream."""
    mean: float
    max: int
    streams: dict[str, QueueSummary]


class KernelLaunchDelay(Record, kw_only=True):
    name: str
    count: int
    mean_launch_delay_us: float
    max_launch_delay_us: float


class Launch(Record, kw_only=True):
    """HTA's get_cuda_kernel_launch_stats: the wait from a launch call's end to its kernel's start."""
    count: int  # launches matched to their kernels
    mean_launch_delay_us: Optional[float]
    p50_launch_delay_us: Optional[float]
    p95_launch_delay_us: Optional[float]
    max_launch_delay_us: Optional[float]
    mean_cpu_launch_us: Optional[float]  # the launch call's own duration
    runtime_outliers: int  # launch calls over 50 µs (HTA's runtime_cutoff)
    delay_outliers: int  # delays over 100 µs (HTA's launch_delay_cutoff)
    per_kernel: list[KernelLaunchDelay]  # the kernels with the most delay
    queue: Optional[Queue]


class Overlap(Record, kw_only=True):
    """HTA's get_comm_comp_overlap."""
    communication_us: float
    overlapped_us: float
    comp_comm_overlap_pct: float
    top_kernel: str  # the communication kernel with the most time (its collective names low_overlap's fix)


# --------------------------------------------------------------------------------------- dashboard metrics (metrics.py)
class KernelSummary(Record, kw_only=True):
    count: int
    total_us: float
    distinct: int
    mean_us: Optional[float] = None  # the rest: only when there are kernels
    p50_us: Optional[float] = None
    short_share: Optional[float] = None  # share of kernels under metrics.SHORT_KERNEL_US


class TopKernel(Record, kw_only=True):
    name: str
    total_us: float
    count: int
    mean_us: float


class Busy(Record, kw_only=True):
    us: float
    count: int


class MemoryOp(Busy, kw_only=True):
    bytes: int


class Histogram(Record, kw_only=True):
    edges_us: list[float]
    counts: list[int]


class StepRow(Record, kw_only=True):
    step: int
    ts_us: float
    dur_us: float
    cpu_ops_recorded: Optional[bool] = None  # duty-cycled capture: the step holds recorded operators
    profiler_writing: Optional[bool] = None  # it ran while the profiler's writer converted a window


class Durations(Record, kw_only=True):
    """Statistics of durations (µs) of at least one span: steps and annotations are records only where spans are."""
    count: int
    total_us: float
    mean_us: float
    min_us: float
    p50_us: float
    p90_us: float
    max_us: float
    std_us: float


class Steps(Durations, kw_only=True):
    """Host-side step annotations (ProfilerStep#N, step_N)."""
    steps: list[StepRow]
    histogram: Histogram


class AnnotationStats(Durations, kw_only=True):
    """An annotation label's spans (metrics.annotation_groups)."""
    name: str
    side: Literal["CPU", "GPU"]
    histogram: Histogram


class StepBreakdown(Record, kw_only=True):
    """Where annotated steps' time goes (metrics.step_breakdown)."""
    steps: int
    step_us: float
    phases: list[str]
    outside_phases_us: Optional[float]  # None unless Forward, Backward and Optimizer are all annotated
    dataloader_us: float
    gpu_idle_us: Optional[float]  # None without GPU activity
    dataloader_steps: Optional[int] = None  # duty-cycled capture: the steps DataLoader time was measured over
    dataloader_step_us: Optional[float] = None


class Utilization(Record, kw_only=True):
    """Busy percent per time bin."""
    t0_us: float
    bin_us: float
    busy_pct: list[float]


class CpuActivity(Record, kw_only=True):
    active_us: float
    span_us: float
    threads: int
    utilization: Utilization


class CpuOpsSampled(Record, kw_only=True):
    """A duty-cycled capture: operators recorded in `steps` of every `every_steps` steps."""
    steps: int
    every_steps: int
    windows: int
    recorded_us: float
    total_steps: int
    recorded_steps: int


# --------------------------------------------------------------------------------------------- the loop (loop.py)
class LoopMeans(Record, kw_only=True):
    """Mean µs per judged step; input figures over `input_steps`; phases only when annotated/hooked."""
    cycle: float
    input: float
    input_cycle: float
    input_between_steps: float
    input_inside_steps: float
    forward: Optional[float] = None
    backward: Optional[float] = None
    optimizer: Optional[float] = None
    pipeline_wait: Optional[float] = None  # a pipeline stage blocked in its receives (pipeline_wait annotations)

    def measured(self) -> dict[str, float]:
        """Every mean that was measured, by name."""
        return {k: v for k, v in msgspec.structs.asdict(self).items() if v is not None}


class Unexplained(Record, kw_only=True):
    """Mean µs per judged step that no recorded work explains (loop.unexplained), by where it sits."""
    before_first_work: float  # inside the step annotation, before its first annotation/hook/operator
    between_work: float  # inside it, between pieces of recorded work
    after_last_work: float  # inside it, after the last
    between_steps: float  # from the step annotation's end to the next step's start, nothing recorded
    explained: float  # covered by recorded work, inside the step and between steps
    cycle: float
    total: float  # the four places together


class Loop(Record, kw_only=True):
    """The training loop (profiler/analysis/loop.py)."""
    source: str  # "step annotations", "optimizer.step hooks" or "Optimizer.step operators"
    # gradient accumulation: the step annotations are micro-steps, the optimizer runs in every k-th; a step is then
    # the k micro-steps up to and including the optimizer's (its number is that micro-step's annotation). Or the
    # steps already span k micro-batches, as the job set it (the HF Trainer's gradient_accumulation_steps)
    micro_steps_per_step: Optional[int] = None
    count: int  # steps found
    judged: int  # steps the findings judge (warm-up and profiler-slowed ones left out)
    warmup_steps: int
    slowed_by_profiler: int
    input_source: Optional[str]  # "DataLoader hooks", "DataLoader operators" or None
    phases: list[str]
    step: list[int]
    start_us: list[float]  # from the first step's start
    cycle_us: list[float]  # start to next start
    annotated_us: list[float]  # the step annotation's own duration (the cycle's end for hook-found steps)
    input_us: list[float]
    judged_mask: list[bool]
    input_steps: int
    mean_us: LoopMeans
    total_judged_us: float
    unexplained_us: Optional[Unexplained] = None  # steps from step annotations only
    phase_us: Optional[dict[str, list[float]]] = None  # each step's time in each annotated phase (as cycle_us)
    pipeline_waits_per_step: Optional[float] = None  # pipeline_wait receives per judged step (microbatches' receives)


class MemorySeries(Record, kw_only=True):
    t_s: list[float]  # seconds from the first sample
    bytes: list[int]
    samples: int


# ------------------------------------------------------------------------------------------------------ one rank
class RankAnalysis(Record, kw_only=True):
    temporal: Optional[Temporal]
    kernel_types: Optional[dict[str, float]]  # HTA's kernel-type sweep: label → µs
    top_kernels: list[TopKernel]
    launch: Launch
    idle_breakdown: Optional[IdleBreakdown]
    overlap: Optional[Overlap]
    kernels: KernelSummary
    gpu_activity: dict[str, Busy]  # kernel, memcpy, memset, sync
    memory_ops: dict[str, MemoryOp]  # HtoD, DtoH, …, memset
    precision: dict[str, float]  # precision label → kernel µs
    steps: Optional[Steps]
    step_breakdown: Optional[StepBreakdown]
    loop: Optional[Loop]
    compiled: bool  # torch.compile at work in the trace
    memory: dict[str, MemorySeries]  # process_rss, cuda_allocated, cuda_reserved
    cpu_ops_sampled: Optional[CpuOpsSampled]
    annotations: list[AnnotationStats]
    cpu: Optional[CpuActivity]
    gpu_utilization: dict[str, Utilization]  # per device
    events: int
    devices: dict[str, str]
    source: str
    notes: list[str]  # why a section is null

    @property
    def idle_share(self) -> Optional[float]:
        """The GPU's idle share of its span (HTA's temporal breakdown), None without GPU activity."""
        return self.temporal.idle_share if self.temporal is not None else None


# ------------------------------------------------------------------------------------------------- hosts (counters.py)
class SampledSeries(Record, kw_only=True):
    t_s: list[float]
    value: list[float]
    mean: float
    max: float


class SampledMetric(Record, kw_only=True):
    series: dict[str, SampledSeries]  # "all" (the whole machine) or a core / GPU index
    mean: float
    samples: int


class HostSummary(Record, kw_only=True):
    """Sampled utilisation of a host (the system monitor's counters)."""
    t0_ns: int
    span_s: float
    metrics: dict[str, SampledMetric]  # cpu_util, gpu_util, gpu_mem_used, …


# ------------------------------------------------------------------------------------------------------ the whole
class JobContext(Record, kw_only=True):
    """Job settings a trace cannot tell (profiler/job_settings.py): recorded in the profile or given."""
    pipeline_parallel_degree: Optional[int] = None
    microbatches: Optional[int] = None
    microbatches_per_fill: Optional[int] = None  # sagelaunch SMP's active_microbatches waves: each fills and drains
    virtual_stages: Optional[int] = None  # pipeline stages each rank runs (sagelaunch's interleaved SMP: 2)
    gradient_accumulation_steps: Optional[int] = None  # the Hugging Face Trainer's, noted by our callback


class RankColumn(Record, kw_only=True):
    key: str
    label: str
    unit: str


class RanksCompared(Record, kw_only=True):
    """The ranks side by side (ranks_compared.py)."""
    columns: list[RankColumn]
    rows: list[dict[str, Union[str, Number]]]  # {"rank": "0", column key: value}
    largest: dict[str, str]  # column key → the rank with the largest value


class AnalysisResult(Record, kw_only=True):
    ranks: dict[str, RankAnalysis]
    hosts: dict[str, HostSummary]
    warnings: list[str]
    source: str
    context: JobContext
    ranks_compared: Optional[RanksCompared]
    figures: list[Figure]
    findings: list[Finding]


# ------------------------------------------------------------------------------------------ profile diff (diff.py)
class PhaseChange(Record, kw_only=True):
    """Mean µs per step of a phase (the cycle, input, forward, …) in A and B."""
    phase: str
    a_us_per_step: float
    b_us_per_step: float
    diff_us_per_step: float  # B - A


class NameChange(Record, kw_only=True):
    """An annotation's or a kernel's count and total time in A and B (HTA's TraceDiff columns)."""
    name: str
    a_count: int
    b_count: int
    a_total_us: float
    b_total_us: float
    diff_counts: int
    diff_duration_us: float  # B - A


class ProfileDiff(Record, kw_only=True):
    """`sagelaunch profile diff A B`: largest change first."""
    a: str  # the profiles' sources
    b: str
    phases: list[PhaseChange]  # the cycle first
    annotations: list[NameChange]
    kernels: list[NameChange]


def convert(values: Any, record: type) -> Any:
    """Plain values as a record (strict: a wrong value raises msgspec.ValidationError, naming its path)."""
    return msgspec.convert(values, record, strict=True)


def to_json(result: AnalysisResult | ProfileDiff) -> bytes:
    """The record's JSON, as `profile analyze --json` (and `profile diff --json`) print it."""
    return msgspec.json.encode(result)


def check(document: dict) -> AnalysisResult:
    """A JSON document (``profile analyze --json``'s), validated against the records; a mismatch raises
    msgspec.ValidationError naming the field's path."""
    return convert(document, AnalysisResult)
