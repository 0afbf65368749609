"""ProfilerConfig, Profiler, FrameworkProfile and SageMaker Debugger's hook, rules and TensorBoard output, as
SageMaker SDK v2 users write them (`from sagemaker.debugger import …`); `to_settings()` feeds the job spec."""

from sagelaunch.profiler_config import rule_configs
from sagelaunch.profiler_config.config import ALLOWED_INTERVALS_MILLIS, Profiler, ProfilerConfig
from sagelaunch.profiler_config.debugger import (CollectionConfig, DebuggerHookConfig, ProfilerRule, Rule,
                                      TensorBoardOutputConfig)
from sagelaunch.profiler_config.framework_profile import (DataloaderProfilingConfig, DetailedProfilingConfig, FrameworkProfile,
                                               HorovodProfilingConfig, PythonProfilingConfig,
                                               SMDataParallelProfilingConfig)

__all__ = ["ProfilerConfig", "Profiler", "FrameworkProfile", "ALLOWED_INTERVALS_MILLIS", "DebuggerHookConfig",
           "CollectionConfig", "TensorBoardOutputConfig", "Rule", "ProfilerRule", "rule_configs", "DetailedProfilingConfig",
           "DataloaderProfilingConfig", "PythonProfilingConfig", "HorovodProfilingConfig", "SMDataParallelProfilingConfig"]
