"""ProfilerConfig / Profiler: the SageMaker SDK v2's argument names and order, validated at construction.

`ProfilerConfig(s3_output_path=None, system_monitor_interval_millis=None, framework_profile_params=None,
profile_params=None, disable_profiler=False)`. Without `profile_params` it is Debugger's monitoring only
(system metrics, no ProfilingParameters, no processing rule); `profile_params=Profiler(...)` asks for
SageMaker Profiler's detailed capture. AWS's own docs show `profiler_params=`; it is accepted with a
DeprecationWarning.
"""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

from pydantic import Field, field_validator, model_validator

from sagelaunch.jobspec.contract import DEFAULT_CPU_PROFILING_DURATION_S, DEFAULT_FILE_ROTATION_S
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.profiling import profiling_parameters
from sagelaunch.jobspec.s3uri import check_s3_uri
from sagelaunch.jobspec.spec import ProfilerSettings
from sagelaunch.profiler_config.framework_profile import FrameworkProfile
from sagelaunch.profiler_config.v2_args import V2Args

# SageMaker Debugger's allowed system-monitor intervals (ms): 100 ms … 1 minute.
ALLOWED_INTERVALS_MILLIS = (100, 200, 500, 1000, 5000, 60000)
MAX_DURATION_SECS = 28 * 24 * 3600  # the longest a training job can run


class Profiler(V2Args):
    """What SageMaker Profiler's detailed (framework) capture records."""

    POSITIONAL: ClassVar[tuple[str, ...]] = ("cpu_profiling_duration", "file_rotation_interval")

    cpu_profiling_duration: int = Field(DEFAULT_CPU_PROFILING_DURATION_S, ge=1, le=MAX_DURATION_SECS,
                                        description="seconds of detailed capture")
    file_rotation_interval: int = Field(DEFAULT_FILE_ROTATION_S, ge=1, le=MAX_DURATION_SECS,
                                        description="seconds per trace file")

    @property
    def profiling_parameters(self) -> dict[str, str]:
        """ProfilingParameters as v2 sends them (v2's attribute name)."""
        return profiling_parameters(self.cpu_profiling_duration, self.file_rotation_interval)

    def to_request_dict(self) -> dict[str, str]:
        return self.profiling_parameters


class ProfilerConfig(V2Args):
    POSITIONAL: ClassVar[tuple[str, ...]] = (
        "s3_output_path", "system_monitor_interval_millis", "framework_profile_params", "profile_params",
        "disable_profiler",
    )

    s3_output_path: str | None = None
    system_monitor_interval_millis: int | None = None
    framework_profile_params: FrameworkProfile | None = None
    profile_params: Profiler | None = None  # None: monitoring only
    disable_profiler: bool = False

    @model_validator(mode="before")
    @classmethod
    def _accept_profiler_params(cls, data: Any) -> Any:
        if isinstance(data, dict) and "profiler_params" in data:
            if "profile_params" in data:
                raise SagelaunchError("give profile_params only (profiler_params is its misspelt alias)",
                                      field="profiler_params", value=data["profiler_params"],
                                      allowed="profile_params only", fix="drop profiler_params")
            warnings.warn(
                "ProfilerConfig(profiler_params=...) is a misspelling; use profile_params=",
                DeprecationWarning, stacklevel=4,
            )
            data = {**data, "profile_params": data["profiler_params"]}
            del data["profiler_params"]
        return data

    @model_validator(mode="after")
    def _one_framework_capture(self) -> "ProfilerConfig":
        if self.profile_params is not None and self.framework_profile_params is not None:
            raise SagelaunchError("profile_params (SageMaker Profiler) and framework_profile_params (Debugger's framework "
                                  "profiling) cannot both be set; keep profile_params=Profiler(...)",
                                  field="framework_profile_params", value=self.framework_profile_params,
                                  allowed="one of profile_params and framework_profile_params",
                                  fix="keep profile_params=Profiler(...)")
        return self

    @field_validator("s3_output_path")
    @classmethod
    def _s3(cls, v: str | None) -> str | None:
        return None if v is None else check_s3_uri("s3_output_path", v)

    @field_validator("system_monitor_interval_millis")
    @classmethod
    def _interval(cls, v: int | None) -> int | None:
        if v is not None and v not in ALLOWED_INTERVALS_MILLIS:
            nearest = min(ALLOWED_INTERVALS_MILLIS, key=lambda a: abs(a - v))
            allowed = ", ".join(map(str, ALLOWED_INTERVALS_MILLIS))
            raise SagelaunchError(f"system_monitor_interval_millis={v} is not allowed; allowed: {allowed}; did you mean "
                                  f"{nearest}?", field="system_monitor_interval_millis", value=v, allowed=allowed,
                                  fix=f"did you mean {nearest}?")
        return v

    @property
    def detailed(self) -> bool:
        """Whether SageMaker Profiler's detailed capture is asked for (its support matrix then applies)."""
        return self.profile_params is not None

    def to_settings(self) -> ProfilerSettings:
        """The job's profiler settings; locally our profiler captures the same way for every form."""
        profile = self.profile_params or Profiler()
        framework = self.framework_profile_params
        return ProfilerSettings(
            s3_output_path=self.s3_output_path,
            system_monitor_interval_millis=self.system_monitor_interval_millis,
            cpu_profiling_duration=profile.cpu_profiling_duration,
            file_rotation_interval=profile.file_rotation_interval,
            disable_profiler=self.disable_profiler,
            detailed=self.detailed,
            framework_profile_parameters=framework.profiling_parameters if framework is not None else None,
        )
