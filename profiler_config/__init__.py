"""ProfilerConfig and Profiler as SageMaker users write them; `to_settings()` feeds the job spec."""

from profiler_config.config import ALLOWED_INTERVALS_MILLIS, Profiler, ProfilerConfig

__all__ = ["ProfilerConfig", "Profiler", "ALLOWED_INTERVALS_MILLIS"]
