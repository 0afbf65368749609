"""Every threshold of the findings, in one place (documented in profiler/README.md, "Findings")."""

# input_bound: share of the step cycle spent in the DataLoader (our hook or Kineto's DataLoader operators, between
# steps and inside them), and at least this much per step: below ~1 ms a worker's hand-off costs about as much as it saves
INPUT_WAIT_SHARE = 0.10
INPUT_WAIT_SHARE_HIGH = 0.25
INPUT_WAIT_MIN_US = 1000.0
# low_gpu_utilization: GPU idle share of the GPU span (HTA temporal breakdown) or of sampled NVML utilisation
GPU_IDLE_SHARE = 0.30
GPU_IDLE_SHARE_HIGH = 0.60
GPU_SAMPLED_UTIL_LOW = 50.0  # percent
# launch_bound, as HTA reads host-bound: the GPU idle this share of its span, this share of its gaps host wait (HTA's
# idle-time breakdown), and the launch queue of the stream the host feeds this short (HTA's queue length: more, and
# the host is ahead of the GPU). Enough kernels to judge, and gaps of a launch's size (Python dispatch, tens of µs),
# not of other host work between kernels
LAUNCH_MIN_KERNELS = 100
LAUNCH_GPU_IDLE_SHARE = 0.10
LAUNCH_HOST_WAIT_SHARE = 0.5
LAUNCH_MAX_QUEUE = 2.0
LAUNCH_MAX_HOST_WAIT_PER_KERNEL_US = 500.0
# low_overlap: communication not hidden behind compute
OVERLAP_MIN_COMM_SHARE = 0.05  # communication time as a share of the GPU span
OVERLAP_EXPOSED_SHARE = 0.50  # share of communication time with no compute running
# pipeline_bubble: pipeline_parallel_degree > 1 and the stages idle this much
PIPELINE_IDLE_SHARE = 0.20
# ... or, measured on CPU (pipeline_wait annotations), the stages blocked in their receives this share of a step: a
# quarter sits between GPipe's 1/3 (2 stages, 2 microbatches) and 1/5 (4 microbatches, where the fix would ask for more
# microbatches at a cost in per-microbatch efficiency worth more than the bubble left)
PIPELINE_WAIT_SHARE = 0.25
PIPELINE_MICROBATCHES_PER_STAGE = 4  # the fix asks for at least this many microbatches per stage
# straggler_rank: one rank's mean step cycle this much above the median of the others (ranks that do not wait for
# each other); or, when a collective equalises the cycles, its own time (cycle less Backward) above the others' in
# most steps while they wait longer in Backward, losing them time; or its GPU idle share this many points above theirs
STRAGGLER_STEP_RATIO = 1.20
STRAGGLER_MIN_STANDARD_ERRORS = 4.0  # the mean excess over its standard error: below, equal ranks' noise
STRAGGLER_MIN_LOST_US = 100_000.0  # the others' extra wait over the run: under 0.1 s no change is worth making
STRAGGLER_OWN_WORK_SHARE_HIGH = 0.30
STRAGGLER_WAIT_SHARE = 0.5  # of the straggler's excess: how much longer the others' Backward must be
STRAGGLER_IDLE_POINTS = 20.0
# step_outlier: steps this many times the median of their neighbours (STEP_OUTLIER_WINDOW steps around them; warm-up
# and profiler-slowed steps left out), judged by the time they lose: a share of the judged time, lower when the slow
# steps come back with a period (checkpoints, evaluation, logging)
STEP_OUTLIER_RATIO = 1.5
STEP_OUTLIER_MIN_STEPS = 5
STEP_OUTLIER_WINDOW = 21
STEP_OUTLIER_LOST_SHARE = 0.10
STEP_OUTLIER_LOST_SHARE_PERIODIC = 0.03
STEP_OUTLIER_LOST_SHARE_HIGH = 0.20
STEP_OUTLIER_MIN_LOST_US = 100_000.0  # under 0.1 s lost in all, no change is worth making
STEP_OUTLIER_PERIOD_MIN_REPEATS = 3
# memory_growth: the process's own memory (RSS, CUDA allocated/reserved) or a device's (NVML) grows this much from
# the first to the last quarter of the run, rising in most samples
MEMORY_GROWTH_SHARE = 0.10  # of the first quarter's bytes
MEMORY_GROWTH_MIN_BYTES = 64 * 2**20
MEMORY_GROWTH_SHARE_HIGH = 0.50
MEMORY_RISING_SHARE = 0.7
# unexplained_step: the recorded work (phases, DataLoader, hooks, operators) leaves this share of the step cycle
# unexplained (less than most of the step explained), and at least this much per step
UNEXPLAINED_SHARE = 0.5
UNEXPLAINED_SHARE_HIGH = 0.75
UNEXPLAINED_MIN_US = 1000.0
# host_contention: a host whose every core is ≥ HOST_BUSY_CORE_PCT busy in ≥ HOST_SATURATED_SAMPLES of its CPU
# samples (at least HOST_MIN_SAMPLES); a slow step without a period is the host's on such a host, or anywhere when
# every annotated phase is ≥ HOST_ALL_PHASES_RATIO its median (HOST_ALL_PHASES_MIN_STEPS such steps at least); fires when those steps lose ≥
# HOST_CONTENTION_LOST_SHARE of the judged time (step_outlier's share for irregular steps) and ≥
# STEP_OUTLIER_MIN_LOST_US; medium from HOST_CONTENTION_LOST_SHARE_MEDIUM, never high (the code is not at fault)
HOST_BUSY_CORE_PCT = 90.0
HOST_SATURATED_SAMPLES = 0.5
HOST_MIN_SAMPLES = 3  # fewer samples (about a second) cannot say the host was busy through the run
HOST_ALL_PHASES_RATIO = 1.3
HOST_ALL_PHASES_MIN_STEPS = 5  # slow steps slower everywhere: fewer are pauses, not a pattern
HOST_CONTENTION_LOST_SHARE = 0.10
HOST_CONTENTION_LOST_SHARE_MEDIUM = 0.20
