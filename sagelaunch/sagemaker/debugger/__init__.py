"""v2's sagemaker.debugger: the profiler and Debugger configuration."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.profiler_config import (CollectionConfig, DataloaderProfilingConfig, DebuggerHookConfig, DetailedProfilingConfig,
                             FrameworkProfile, HorovodProfilingConfig, Profiler, ProfilerConfig, ProfilerRule,
                             PythonProfilingConfig, Rule, SMDataParallelProfilingConfig, TensorBoardOutputConfig,
                             rule_configs)

__all__ = ["ProfilerConfig", "Profiler", "FrameworkProfile", "DebuggerHookConfig", "CollectionConfig",
           "TensorBoardOutputConfig", "Rule", "ProfilerRule", "rule_configs", "DetailedProfilingConfig",
           "DataloaderProfilingConfig", "PythonProfilingConfig", "HorovodProfilingConfig",
           "SMDataParallelProfilingConfig"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
