"""Every threshold of the findings, in one place (documented in profiler/README.md, "Findings")."""

# input_bound: share of step time spent waiting for input (DataLoader operators, or outside Forward/Backward/
# Optimizer when the script annotates all three)
INPUT_WAIT_SHARE = 0.10
INPUT_WAIT_SHARE_HIGH = 0.25
# low_gpu_utilization: GPU idle share of the GPU span (HTA temporal breakdown) or of sampled NVML utilisation
GPU_IDLE_SHARE = 0.30
GPU_IDLE_SHARE_HIGH = 0.60
GPU_SAMPLED_UTIL_LOW = 50.0  # percent
# launch_bound: many kernels, most of them short, and the GPU waits for launches
LAUNCH_MIN_KERNELS = 500
LAUNCH_SHORT_SHARE = 0.5  # share of kernels shorter than metrics.SHORT_KERNEL_US
LAUNCH_GPU_IDLE_SHARE = 0.10
# low_overlap: communication not hidden behind compute
OVERLAP_MIN_COMM_SHARE = 0.05  # communication time as a share of the GPU span
OVERLAP_EXPOSED_SHARE = 0.50  # share of communication time with no compute running
# pipeline_bubble: pipeline_parallel_degree > 1 and the stages idle this much
PIPELINE_IDLE_SHARE = 0.20
PIPELINE_MICROBATCHES_PER_STAGE = 4  # the fix asks for at least this many microbatches per stage
# straggler_rank: one rank's mean step time this much above the median of the ranks, or its GPU idle share
# this many points above theirs
STRAGGLER_STEP_RATIO = 1.20
STRAGGLER_IDLE_POINTS = 20.0
# step_outlier: steps this many times the median step (the first step is warm-up and not judged)
STEP_OUTLIER_RATIO = 1.5
STEP_OUTLIER_MIN_STEPS = 5
# memory_growth: memory used grows this much from the first to the last quarter of the run
MEMORY_GROWTH_POINTS = 10.0  # percent of the device / host
MEMORY_GROWTH_BYTES_SHARE = 0.10  # of the first quarter's bytes used
