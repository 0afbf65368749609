"""The SageMaker Profiler (smppy) names `profiler` serves: one list, read by profiler/__init__ and profiler/api."""

API = {
    "SMProfiler",
    "Config",
    "configure",
    "start_profiling",
    "stop_profiling",
    "annotate",
    "annotation_begin",
    "annotation_end",
}
