"""`from sagelaunch.profiler import smprof`: the SageMaker Profiler (smppy) names in one namespace."""

from sagelaunch.profiler.api import (  # noqa: F401
    Config,
    SMProfiler,
    annotate,
    annotation_begin,
    annotation_end,
    configure,
    start_profiling,
    stop_profiling,
)
