"""Where the profiler's settings and output live inside a job, and the `Config` a script may pass to configure().

Discovery (the team's contract): the settings file is ``$SAGELAUNCH_PROFILER_CONFIG`` (local backend) else
``/opt/ml/input/config/profilerconfig.json`` (SageMaker)::

    {"ProfilingIntervalInMilliseconds": 500 | null,
     "ProfilingParameters": {"CPUProfilingDuration": "3600", "SMPFileRotationSecs": "600"},
     "DisableProfiler": false}

ProfilingParameters may also carry our extensions ``"RecordCpuOps": "true"`` (default false: record framework
operators through Kineto), ``"RecordCpuOpsSteps"`` / ``"RecordCpuOpsEverySteps"`` (its duty cycle) and
``"SMPFileRotationSteps"``. Output goes to ``$SM_PROFILER_OUTPUT_DIR`` else ``/opt/ml/output/profiler``.
With no settings file at all the profiler still works when the script calls start_profiling() (defaults below).
"""

from __future__ import annotations

import json
import logging
import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

from sagelaunch.jobspec.contract import (DEFAULT_CPU_OPS_EVERY_STEPS, DEFAULT_CPU_OPS_STEPS, DEFAULT_CPU_PROFILING_DURATION_S, DEFAULT_FILE_ROTATION_S, DEFAULT_FILE_ROTATION_STEPS,
                              DEFAULT_PROFILER_CONFIG_PATH as DEFAULT_CONFIG_PATH,
                              DEFAULT_PROFILER_OUTPUT_DIR as DEFAULT_OUTPUT_DIR, DEFAULT_RESOURCE_CONFIG_PATH,
                              SAGELAUNCH_PROFILER_CONFIG, SM_CURRENT_HOST, SM_PROFILER_OUTPUT_DIR)
from sagelaunch.jobspec.profiling import (CPU_OPS_EVERY_STEPS, CPU_OPS_STEPS, CPU_PROFILING_DURATION, FILE_ROTATION, FILE_ROTATION_STEPS, RECORD_CPU_OPS, flag_param,
                               seconds_param)
from sagelaunch.jobspec.errors import SagelaunchError

log = logging.getLogger("sagelaunch.profiler")

DEFAULT_INTERVAL_MS = 500
DEFAULT_RECORD_CPU_OPS = False


@dataclass
class Config:
    """Settings of the in-script profiler; every field left None comes from profilerconfig.json or defaults.

    record_cpu_ops: also record framework operators (torch.profiler/Kineto CPU activity) when the script
    imported torch. Off by default: Kineto's recording, stop and export cost 2-3x the time of a step of small
    operators, so even the duty cycle below costs ~8% per step on such loops (profiler/README.md, "Overhead and
    size"). Turn it on with Config(record_cpu_ops=True) or "RecordCpuOps": "true" in ProfilingParameters.

    cpu_ops_steps / cpu_ops_every_steps (RecordCpuOpsSteps / RecordCpuOpsEverySteps): with CPU operators on,
    they are recorded in cpu_ops_steps consecutive steps out of every cpu_ops_every_steps (default 4 of 200;
    equal values record every step). Each trace file's metadata says when operators were recorded.
    """

    output_dir: str | None = None
    system_monitor_interval_millis: int | None = None
    cpu_profiling_duration: int | None = None  # seconds of detailed capture after start_profiling()
    file_rotation_secs: int | None = None  # SMPFileRotationSecs: a new trace file per window
    file_rotation_steps: int | None = None  # SMPFileRotationSteps: while Kineto records, a new window per N steps
    record_cpu_ops: bool | None = None
    cpu_ops_steps: int | None = None  # RecordCpuOpsSteps: steps with operators recorded per cycle ...
    cpu_ops_every_steps: int | None = None  # RecordCpuOpsEverySteps: ... of this many steps
    record_shapes: bool = False
    device_activity: bool = True  # Kineto CUDA/HIP activity when a GPU is present
    disabled: bool | None = None
    host: str | None = None
    rank: int | None = None
    extra: dict = field(default_factory=dict)
    # SageMaker Profiler's native options, as its scripts set them: config.profiler = {"EnableCuda": "1", ...}
    profiler: dict | None = None

    def __post_init__(self) -> None:
        for name in ("cpu_ops_steps", "cpu_ops_every_steps"):
            value = getattr(self, name)
            if value is not None and (type(value) is not int or value < 1):
                raise SagelaunchError(f"Config({name}={value!r}): a whole number of steps ≥ 1 is allowed; "
                                      f"e.g. Config(cpu_ops_steps=4, cpu_ops_every_steps=100), or leave it None",
                                      field=name, value=value, allowed="a whole number of steps ≥ 1, or None",
                                      fix="e.g. Config(cpu_ops_steps=4, cpu_ops_every_steps=100), or leave it None")
        k, n = self.cpu_ops_steps, self.cpu_ops_every_steps
        if k is not None and n is not None and k > n:
            raise SagelaunchError(f"Config(cpu_ops_steps={k}, cpu_ops_every_steps={n}): cpu_ops_steps must be ≤ "
                                  f"cpu_ops_every_steps; use cpu_ops_every_steps={k} to record operators in every step",
                                  field="cpu_ops_steps", value=k, allowed=f"≤ cpu_ops_every_steps ({n})",
                                  fix=f"use cpu_ops_every_steps={k} to record operators in every step")

    def resolved(self) -> "ResolvedConfig":
        """Every field filled from the job's profilerconfig.json, the environment and defaults."""
        file_cfg = read_profiler_config()
        params = file_cfg.get("ProfilingParameters") or {}
        src = file_cfg.get("_source", "profilerconfig.json")

        def steps(value: int | None, name: str, default: int) -> int:
            return value if value is not None else seconds_param(params, name, default, src, unit="steps")

        cpu_ops_steps = steps(self.cpu_ops_steps, CPU_OPS_STEPS, DEFAULT_CPU_OPS_STEPS)
        cpu_ops_every_steps = steps(self.cpu_ops_every_steps, CPU_OPS_EVERY_STEPS, DEFAULT_CPU_OPS_EVERY_STEPS)
        device_activity, native_left = _native_options(self.profiler, self.device_activity)
        if native_left:
            log.warning("profiler: Config.profiler options %s are SageMaker Profiler's native settings with no "
                        "counterpart in sagelaunch's profiler; they have no effect (it writes Parquet under "
                        "SM_PROFILER_OUTPUT_DIR, read by `sagelaunch profile analyze`)", ", ".join(sorted(native_left)))
        return ResolvedConfig(
            output_dir=self.output_dir or os.environ.get(SM_PROFILER_OUTPUT_DIR) or DEFAULT_OUTPUT_DIR,
            system_monitor_interval_millis=(
                self.system_monitor_interval_millis if self.system_monitor_interval_millis is not None
                else int(file_cfg.get("ProfilingIntervalInMilliseconds") or DEFAULT_INTERVAL_MS)),
            cpu_profiling_duration=(
                self.cpu_profiling_duration if self.cpu_profiling_duration is not None
                else seconds_param(params, CPU_PROFILING_DURATION, DEFAULT_CPU_PROFILING_DURATION_S, src)),
            file_rotation_secs=(self.file_rotation_secs if self.file_rotation_secs is not None
                                else seconds_param(params, FILE_ROTATION, DEFAULT_FILE_ROTATION_S, src)),
            file_rotation_steps=steps(self.file_rotation_steps, FILE_ROTATION_STEPS, DEFAULT_FILE_ROTATION_STEPS),
            record_cpu_ops=(self.record_cpu_ops if self.record_cpu_ops is not None
                            else flag_param(params, RECORD_CPU_OPS, DEFAULT_RECORD_CPU_OPS, src)),
            cpu_ops_steps=cpu_ops_steps,
            # e.g. only RecordCpuOpsSteps=200 given: every step
            cpu_ops_every_steps=max(cpu_ops_every_steps, cpu_ops_steps),
            record_shapes=self.record_shapes,
            device_activity=device_activity,
            disabled=self.disabled if self.disabled is not None else bool(file_cfg.get("DisableProfiler", False)),
            host=self.host or current_host(),
            rank=self.rank if self.rank is not None else int(os.environ.get("RANK", "0") or 0),
            extra=dict(self.extra),
        )


@dataclass(frozen=True)
class ResolvedConfig:
    """`Config` with every setting decided: what a profiling session runs with."""

    output_dir: str
    system_monitor_interval_millis: int
    cpu_profiling_duration: int
    file_rotation_secs: int
    file_rotation_steps: int
    record_cpu_ops: bool
    cpu_ops_steps: int
    cpu_ops_every_steps: int
    record_shapes: bool
    device_activity: bool
    disabled: bool
    host: str
    rank: int
    extra: dict = field(default_factory=dict)


NATIVE_OFF = ("0", "false", "no", "off")


def _native_options(profiler: dict | None, device_activity: bool) -> tuple[bool, dict]:
    """smppy's Config.profiler: EnableCuda is our device_activity; its buffer, compression and raw-file options
    (BucketCount, RecordFile, …) have no counterpart here: they come back so the job log says so rather than
    dropping them."""
    options = dict(profiler or {})
    if "EnableCuda" in options:
        device_activity = str(options.pop("EnableCuda")).strip().lower() not in NATIVE_OFF
    return device_activity, options


def config_path() -> Path:
    return Path(os.environ.get(SAGELAUNCH_PROFILER_CONFIG) or DEFAULT_CONFIG_PATH)


def read_profiler_config(path: Path | None = None) -> dict:
    """The profilerconfig.json as a dict ({} when absent or unreadable: the profiler then uses defaults)."""
    path = path or config_path()
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("profiler: cannot read %s (%s); using defaults", path, exc)
        return {}
    if not isinstance(data, dict):
        log.warning("profiler: %s is not a JSON object; using defaults", path)
        return {}
    data["_source"] = str(path)
    return data


def current_host() -> str:
    host = os.environ.get(SM_CURRENT_HOST)
    if host:
        return host
    try:
        rc = json.loads(Path(DEFAULT_RESOURCE_CONFIG_PATH).read_text())
        return rc["current_host"]
    except (OSError, ValueError, KeyError, TypeError):
        return socket.gethostname() or "algo-1"


def profiler_configured() -> bool:
    """True when the job carries a profiler configuration that is not disabled (the script should profile)."""
    cfg = read_profiler_config()
    return bool(cfg) and not cfg.get("DisableProfiler", False)
