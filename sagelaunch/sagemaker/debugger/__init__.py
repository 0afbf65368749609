"""v2's sagemaker.debugger: the profiler and Debugger configuration."""
from sagelaunch.profiler_config import (CollectionConfig, DataloaderProfilingConfig, DebuggerHookConfig, DetailedProfilingConfig,
                             FrameworkProfile, HorovodProfilingConfig, Profiler, ProfilerConfig, ProfilerRule,
                             PythonProfilingConfig, Rule, SMDataParallelProfilingConfig, TensorBoardOutputConfig,
                             rule_configs)

__all__ = ["ProfilerConfig", "Profiler", "FrameworkProfile", "DebuggerHookConfig", "CollectionConfig",
           "TensorBoardOutputConfig", "Rule", "ProfilerRule", "rule_configs", "DetailedProfilingConfig",
           "DataloaderProfilingConfig", "PythonProfilingConfig", "HorovodProfilingConfig",
           "SMDataParallelProfilingConfig"]
