"""The container contract's vocabulary: the names and places a job and its client both rely on.

What a SageMaker training container (and sagelaunch's local backend, which imitates it) exposes
to the script, and what DescribeTrainingJob reports back. Only the words live here; the local
backend's implementation of the contract is `sagelaunch.launcher.local.contract`, the in-job reader `sagelaunch.profiler.settings`.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

# ---------------------------------------------------------------- job statuses (DescribeTrainingJob)
STATUSES = ("InProgress", "Completed", "Failed", "Stopping", "Stopped")
TERMINAL_STATUSES = ("Completed", "Failed", "Stopped")

# ---------------------------------------------------------------- environment variables inside a job
SM_HP_MP_PARAMETERS = "SM_HP_MP_PARAMETERS"  # the SMP v1 parameters, JSON
SM_PROFILER_OUTPUT_DIR = "SM_PROFILER_OUTPUT_DIR"  # where the profiler writes
SM_CURRENT_HOST = "SM_CURRENT_HOST"
SAGELAUNCH_PROFILER_CONFIG = "SAGELAUNCH_PROFILER_CONFIG"  # local jobs: where profilerconfig.json is
SAGELAUNCH_SMP_INIT_DIR = "SAGELAUNCH_SMP_INIT_DIR"  # local SMP jobs: smp.init leaves one file per rank here
# SMP jobs: the partial-checkpoint file names of the SMP release the job's framework version ships (jobspec.smp)
SAGELAUNCH_SMP_CHECKPOINT_NAMES = "SAGELAUNCH_SMP_CHECKPOINT_NAMES"

# ---------------------------------------------------------------- the /opt/ml tree
OPT_ML = PurePosixPath("/opt/ml")
PROFILER_CONFIG_FILE = "profilerconfig.json"
DEFAULT_PROFILER_CONFIG_PATH = str(OPT_ML / "input" / "config" / PROFILER_CONFIG_FILE)
DEFAULT_RESOURCE_CONFIG_PATH = str(OPT_ML / "input" / "config" / "resourceconfig.json")
PROFILER_OUTPUT_SUBDIR = ("output", "profiler")  # below a host's /opt/ml
DEFAULT_PROFILER_OUTPUT_DIR = str(OPT_ML.joinpath(*PROFILER_OUTPUT_SUBDIR))


def host_profiler_dir(job_dir: str | Path, host: str) -> Path:
    """A local job's profiler output for one host: <job dir>/<host>/output/profiler."""
    return Path(job_dir, host, *PROFILER_OUTPUT_SUBDIR)


# ---------------------------------------------------------------- profiler defaults (SageMaker's)
DEFAULT_CPU_PROFILING_DURATION_S = 3600  # CPUProfilingDuration: seconds of detailed capture
DEFAULT_FILE_ROTATION_S = 600  # SMPFileRotationSecs: seconds per trace file
# SMPFileRotationSteps: while Kineto records, steps per trace file. Kineto keeps every event of a window in memory
# (~0.5-4 KB per CPU operator), so windows also end after this many steps: memory is bounded by one window.
DEFAULT_FILE_ROTATION_STEPS = 50
# RecordCpuOpsSteps / RecordCpuOpsEverySteps: with CPU operators on, Kineto records them in this many consecutive
# steps out of every that many (a duty cycle; equal values record every step). Kineto's per-operator recording
# and export cost ~2x a step of small operators, so recording 4 steps of every 200 keeps a small-operator loop
# within 1.2x wall time (scripts/bench_profiler_capture.py) while every window holds full operator detail.
DEFAULT_CPU_OPS_STEPS = 4
DEFAULT_CPU_OPS_EVERY_STEPS = 200
