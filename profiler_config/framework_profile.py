"""FrameworkProfile: SageMaker Debugger's (older) framework profiling, with the SDK v2's names, order and
ProfilingParameters.

SageMaker stopped collecting framework metrics with PyTorch 2.0 and TensorFlow 2.12 (the estimators refuse
it there: jobspec's support matrix, `debugger.framework_profiling_discontinued_from`). The step or time
range applies to every metric (v2's `start_step`/`num_steps` or `start_unix_time`/`duration`); v2's
per-metric configuration objects (DetailedProfilingConfig, …) are not taken.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from pydantic import Field, model_validator

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.profiler_config.v2_args import V2Args

# v2's profiler_constants: each metric's config name, default start step and number of steps
METRICS = (
    ("DetailedProfilingConfig", 5, 1),
    ("DataloaderProfilingConfig", 7, 1),
    ("PythonProfilingConfig", 9, 3),
    ("HorovodProfilingConfig", 13, 1),
    ("SMDataParallelProfilingConfig", 15, 1),
)
ONE_RANGE = ("give one range for every metric (start_step=, num_steps= or start_unix_time=, duration=), or use "
             "ProfilerConfig(profile_params=Profiler(...))")
PER_METRIC_ARGS = ("detailed_profiling_config", "dataloader_profiling_config", "python_profiling_config",
                   "horovod_profiling_config", "smdataparallel_profiling_config")


def _v2_json(config: dict[str, Any]) -> str:
    """v2's own encoding of a metrics config (`{"StartStep": 5, "NumSteps": 1, }`: not JSON, sent verbatim)."""
    def text(v: Any) -> str:
        return f'"{v}"' if isinstance(v, str) else str(v)

    return "{" + "".join(f"{text(k)}: {text(v)}, " for k, v in config.items()) + "}"


class FrameworkProfile(V2Args):
    POSITIONAL: ClassVar[tuple[str, ...]] = (
        "local_path", "file_max_size", "file_close_interval", "file_open_fail_threshold", *PER_METRIC_ARGS,
        "start_step", "num_steps", "start_unix_time", "duration",
    )

    local_path: str = "/opt/ml/output/profiler"
    file_max_size: int = Field(10485760, gt=0)
    file_close_interval: int | float = Field(60, gt=0)
    file_open_fail_threshold: int = Field(50, gt=0)
    detailed_profiling_config: Any = None
    dataloader_profiling_config: Any = None
    python_profiling_config: Any = None
    horovod_profiling_config: Any = None
    smdataparallel_profiling_config: Any = None
    start_step: int | None = Field(None, ge=0)
    num_steps: int | None = Field(None, gt=0)
    start_unix_time: int | None = None
    duration: int | float | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _check(self) -> "FrameworkProfile":
        given = [name for name in PER_METRIC_ARGS if getattr(self, name) is not None]
        if given:
            raise SagelaunchError(f"FrameworkProfile({given[0]}=...): per-metric profiling configurations are not "
                                  f"supported; {ONE_RANGE}", field=given[0], value=getattr(self, given[0]),
                                  allowed="one range for every metric", fix=ONE_RANGE)
        if (self.start_step is not None or self.num_steps is not None) and (
                self.start_unix_time is not None or self.duration is not None):
            raise SagelaunchError("FrameworkProfile: give a step range (start_step, num_steps) or a time range "
                                  "(start_unix_time, duration), not both", field="start_unix_time",
                                  value=self.start_unix_time, allowed="a step range or a time range",
                                  fix="drop one of the two ranges")
        if self.start_unix_time is not None:
            try:
                datetime.fromtimestamp(self.start_unix_time)
            except (OverflowError, ValueError, OSError):
                raise SagelaunchError(f"FrameworkProfile(start_unix_time={self.start_unix_time}) is not a Unix time; "
                                      "allowed: seconds since 1970, e.g. int(time.time())", field="start_unix_time",
                                      value=self.start_unix_time, allowed="seconds since 1970",
                                      fix="e.g. int(time.time())") from None
        return self

    def _range(self, default_start: int, default_steps: int, name: str) -> dict[str, Any]:
        if self.start_step is None and self.num_steps is None and self.start_unix_time is None and self.duration is None:
            rng: dict[str, Any] = {"StartStep": default_start, "NumSteps": default_steps}
        elif self.start_step is not None or self.num_steps is not None:
            rng = {"StartStep": self.start_step or 0, "NumSteps": self.num_steps or 1}
        else:
            rng = {k: v for k, v in (("StartTimeInSecSinceEpoch", self.start_unix_time), ("Duration", self.duration))
                   if v is not None}
        if name == "DataloaderProfilingConfig":
            rng["MetricsRegex"] = ".*"
        elif name == "PythonProfilingConfig":
            default = self.start_step is self.num_steps is self.start_unix_time is self.duration is None
            rng.update(ProfilerName="cprofile", cProfileTimer="default" if default else "total_time")
        return rng

    @property
    def profiling_parameters(self) -> dict[str, str]:
        """ProfilingParameters exactly as v2 sends them."""
        params = {
            "LocalPath": self.local_path, "RotateMaxFileSizeInBytes": str(self.file_max_size),
            "RotateFileCloseIntervalInSeconds": str(self.file_close_interval),
            "FileOpenFailThreshold": str(self.file_open_fail_threshold),
        }
        for name, start, steps in METRICS:
            params[name] = _v2_json(self._range(start, steps, name))
        return params


class _PerMetricConfig:
    """SDK v2's per-metric configuration classes: importable under v2's names, refused when built."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fix = f"give FrameworkProfile {ONE_RANGE.removeprefix('give ')}"
        raise SagelaunchError(f"{type(self).__name__}: per-metric profiling configurations are not supported; {fix}",
                              field=type(self).__name__, value=None, allowed="one range for every metric", fix=fix)


DetailedProfilingConfig = type("DetailedProfilingConfig", (_PerMetricConfig,), {})
DataloaderProfilingConfig = type("DataloaderProfilingConfig", (_PerMetricConfig,), {})
PythonProfilingConfig = type("PythonProfilingConfig", (_PerMetricConfig,), {})
HorovodProfilingConfig = type("HorovodProfilingConfig", (_PerMetricConfig,), {})
SMDataParallelProfilingConfig = type("SMDataParallelProfilingConfig", (_PerMetricConfig,), {})
