"""ProfilerConfig / Profiler: the SageMaker SDK's argument names, validated at construction.

`ProfilerConfig(s3_output_path=None, system_monitor_interval_millis=None,
profile_params=Profiler(cpu_profiling_duration=3600, file_rotation_interval=600), disable_profiler=False)`.
AWS's own docs show `profiler_params=`; it is accepted with a DeprecationWarning.
"""

from __future__ import annotations

import warnings
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from jobspec.contract import DEFAULT_CPU_PROFILING_DURATION_S, DEFAULT_FILE_ROTATION_S
from jobspec.profiling import profiling_parameters
from jobspec.s3uri import S3_URI
from jobspec.spec import ProfilerSettings

# SageMaker Debugger's allowed system-monitor intervals (ms): 100 ms … 1 minute.
ALLOWED_INTERVALS_MILLIS = (100, 200, 500, 1000, 5000, 60000)
MAX_DURATION_SECS = 28 * 24 * 3600  # the longest a training job can run


def check_s3_uri(field: str, value: str) -> str:
    if not S3_URI.match(value):
        fix = f"s3://{value.removeprefix('s3:/').lstrip('/')}" if value.startswith("s3:/") else "s3://my-bucket/profiler"
        raise ValueError(f"{field}={value!r} is not an S3 URI; allowed: s3://<bucket>[/prefix]; did you mean {fix!r}?")
    return value


class Profiler(BaseModel):
    """What the detailed (framework) profiler captures."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    cpu_profiling_duration: int = Field(DEFAULT_CPU_PROFILING_DURATION_S, ge=1, le=MAX_DURATION_SECS,
                                        description="seconds of detailed capture")
    file_rotation_interval: int = Field(DEFAULT_FILE_ROTATION_S, ge=1, le=MAX_DURATION_SECS,
                                        description="seconds per trace file")

    def to_request_dict(self) -> dict[str, str]:
        return profiling_parameters(self.cpu_profiling_duration, self.file_rotation_interval)


class ProfilerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    s3_output_path: str | None = None
    system_monitor_interval_millis: int | None = None
    profile_params: Profiler = Field(default_factory=Profiler)
    disable_profiler: bool = False

    def __init__(self, *args: Any, **data: Any) -> None:
        # positional order as in the SageMaker SDK
        names = ("s3_output_path", "system_monitor_interval_millis", "profile_params", "disable_profiler")
        if len(args) > len(names):
            raise TypeError(f"ProfilerConfig takes at most {len(names)} positional arguments")
        data.update(zip(names, args))
        super().__init__(**data)

    @model_validator(mode="before")
    @classmethod
    def _accept_profiler_params(cls, data: Any) -> Any:
        if isinstance(data, dict) and "profiler_params" in data:
            if "profile_params" in data:
                raise ValueError("give profile_params only (profiler_params is its misspelt alias)")
            warnings.warn(
                "ProfilerConfig(profiler_params=...) is a misspelling; use profile_params=",
                DeprecationWarning, stacklevel=4,
            )
            data = {**data, "profile_params": data["profiler_params"]}
            del data["profiler_params"]
        return data

    @field_validator("s3_output_path")
    @classmethod
    def _s3(cls, v: str | None) -> str | None:
        return None if v is None else check_s3_uri("s3_output_path", v)

    @field_validator("system_monitor_interval_millis")
    @classmethod
    def _interval(cls, v: int | None) -> int | None:
        if v is not None and v not in ALLOWED_INTERVALS_MILLIS:
            nearest = min(ALLOWED_INTERVALS_MILLIS, key=lambda a: abs(a - v))
            raise ValueError(
                f"system_monitor_interval_millis={v} is not allowed; allowed: "
                f"{', '.join(map(str, ALLOWED_INTERVALS_MILLIS))}; did you mean {nearest}?"
            )
        return v

    def to_settings(self) -> ProfilerSettings:
        return ProfilerSettings(
            s3_output_path=self.s3_output_path,
            system_monitor_interval_millis=self.system_monitor_interval_millis,
            cpu_profiling_duration=self.profile_params.cpu_profiling_duration,
            file_rotation_interval=self.profile_params.file_rotation_interval,
            disable_profiler=self.disable_profiler,
        )
