"""ProfilerConfig / Profiler as SageMaker users write them."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sagelaunch.profiler_config import Profiler, ProfilerConfig


def test_defaults_and_settings():
    pc = ProfilerConfig()
    assert (pc.s3_output_path, pc.system_monitor_interval_millis, pc.disable_profiler) == (None, None, False)
    assert pc.profile_params is None and not pc.to_settings().detailed  # monitoring only, as in SDK v2
    assert Profiler() == Profiler(cpu_profiling_duration=3600, file_rotation_interval=600)
    # SDK v2's positional order: s3_output_path, system_monitor_interval_millis, framework_profile_params,
    # profile_params, disable_profiler
    s = ProfilerConfig("s3://bkt/prof", 500, None, Profiler(cpu_profiling_duration=30)).to_settings()
    assert (s.s3_output_path, s.system_monitor_interval_millis, s.cpu_profiling_duration, s.file_rotation_interval,
            s.detailed) == ("s3://bkt/prof", 500, 30, 600, True)
    assert ProfilerConfig(None, None, None, None, True).disable_profiler
    with pytest.raises(ValidationError, match="framework_profile_params"):
        ProfilerConfig(None, None, Profiler())  # the third position is framework_profile_params, as in v2
    assert Profiler(cpu_profiling_duration=5).to_request_dict() == {"CPUProfilingDuration": "5", "SMPFileRotationSecs": "600"}


def test_profiler_params_misspelling_is_accepted_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="profile_params"):
        pc = ProfilerConfig(profiler_params=Profiler(cpu_profiling_duration=42))
    assert pc.profile_params.cpu_profiling_duration == 42
    with pytest.raises(ValidationError, match="give profile_params only"):
        ProfilerConfig(profiler_params=Profiler(), profile_params=Profiler())


@pytest.mark.parametrize("kw, needle", [
    ({"system_monitor_interval_millis": 300}, "did you mean 200"),
    ({"system_monitor_interval_millis": 0}, "allowed: 100, 200, 500, 1000, 5000, 60000"),
    ({"s3_output_path": "s3:/bucket/p"}, "did you mean 's3://bucket/p'"),
    ({"s3_output_path": "/local/dir"}, "not an S3 URI"),
    ({"profile_params": {"cpu_profiling_duration": 0}}, "cpu_profiling_duration"),
    ({"profile_params": {"file_rotation_interval": -1}}, "file_rotation_interval"),
    ({"unknown": 1}, "unknown"),
])
def test_values_are_validated(kw, needle):
    with pytest.raises(ValidationError) as info:
        ProfilerConfig(**kw)
    assert needle in str(info.value)


def test_assignment_is_validated():
    pc = ProfilerConfig()
    pc.system_monitor_interval_millis = 1000
    with pytest.raises(ValidationError):
        pc.system_monitor_interval_millis = 7
