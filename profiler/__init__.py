"""sagelaunch profiler: the SageMaker Profiler API inside a training script, collectors, artifact and analysis.

In a training script (same names as SageMaker Profiler's ``smppy``)::

    import sagelaunch.profiler as smprof            # or: from sagelaunch.profiler import smprof
    smprof.configure(smprof.Config())   # optional; settings come from the job's profilerconfig.json
    smprof.start_profiling()
    with smprof.annotate("forward"):
        ...
    smprof.stop_profiling()

Importing this package imports neither torch nor tensorflow; a collector imports torch only when it starts.
"""

from __future__ import annotations

from sagelaunch.profiler.public_names import API as _API

__all__ = sorted(_API | {"smprof", "load_profile", "analyze"})


def __getattr__(name: str):
    if name in _API:
        from sagelaunch.profiler import api

        return getattr(api, name)
    if name == "smprof":
        import importlib

        return importlib.import_module("sagelaunch.profiler.smprof")
    if name == "load_profile":
        from sagelaunch.profiler.loader import load_profile

        return load_profile
    if name == "analyze":
        from sagelaunch.profiler.analysis import analyze

        return analyze
    raise AttributeError(f"module 'profiler' has no attribute {name!r}")
