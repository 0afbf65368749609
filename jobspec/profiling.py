"""profilerconfig.json and ProfilerConfig.ProfilingParameters: one encoding, read and written here.

The client writes it into the CreateTrainingJob request; a local job's profilerconfig.json is made from that
request as SageMaker's container gets it; the profiler inside the job reads it. SageMaker sends every ProfilingParameters value as a string.
"""

from __future__ import annotations

import logging
from typing import Any

from sagelaunch.jobspec.contract import DEFAULT_CPU_PROFILING_DURATION_S, DEFAULT_FILE_ROTATION_S


def _warn(*args: Any) -> None:
    logging.getLogger("sagelaunch.profiler").warning(*args)

CPU_PROFILING_DURATION = "CPUProfilingDuration"
FILE_ROTATION = "SMPFileRotationSecs"
FILE_ROTATION_STEPS = "SMPFileRotationSteps"  # sagelaunch's extension: while Kineto records, a window per N steps
RECORD_CPU_OPS = "RecordCpuOps"  # sagelaunch's extension
CPU_OPS_STEPS = "RecordCpuOpsSteps"  # sagelaunch's extension: operators recorded in this many consecutive steps
CPU_OPS_EVERY_STEPS = "RecordCpuOpsEverySteps"  # ... out of every this many (equal values: every step)


def profiling_parameters(cpu_profiling_duration: int = DEFAULT_CPU_PROFILING_DURATION_S,
                         file_rotation_interval: int = DEFAULT_FILE_ROTATION_S) -> dict[str, str]:
    """ProfilingParameters as SageMaker takes them: strings."""
    return {CPU_PROFILING_DURATION: str(cpu_profiling_duration), FILE_ROTATION: str(file_rotation_interval)}


def profiler_config_file(profiler_config: dict[str, Any]) -> dict[str, Any]:
    """profilerconfig.json from a request's ProfilerConfig, as the container gets it. ProfilingParameters that were
    not sent (monitoring only: v2 sends none) are the defaults, which our profiler captures with in every form."""
    return {
        "ProfilingIntervalInMilliseconds": profiler_config.get("ProfilingIntervalInMilliseconds"),
        "ProfilingParameters": {**profiling_parameters(), **(profiler_config.get("ProfilingParameters") or {})},
        "DisableProfiler": bool(profiler_config.get("DisableProfiler")),
    }


def seconds_param(params: dict, key: str, default: int, source: str, unit: str = "seconds") -> int:
    """A positive number (of seconds, or `unit`) from ProfilingParameters; a bad value logs a warning and gives
    `default`."""
    raw = params.get(key)
    if raw in (None, ""):
        return default
    try:
        value = int(float(raw))
        if value <= 0:
            raise ValueError
        return value
    except (TypeError, ValueError):
        _warn("profiler: %s: %s=%r is not a positive number of %s; using %s", source, key, raw, unit, default)
        return default


def flag_param(params: dict, key: str, default: bool, source: str) -> bool:
    """A true/false string from ProfilingParameters; a bad value logs a warning and gives `default`."""
    raw = params.get(key)
    if raw in (None, ""):
        return default
    text = str(raw).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    _warn("profiler: %s: %s=%r is not true/false; using %s", source, key, raw, str(default).lower())
    return default
