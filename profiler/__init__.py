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

import importlib
from typing import Any

from sagelaunch.profiler.public_names import API as _API

# public name → (defining module, its attribute there; None: the module itself). Each is imported on first use:
# every submodule's import runs this package first, and the system monitor's sidecar and the output process must not
# load the API's numpy or the analysis.
_EXPORTS: dict[str, tuple[str, str | None]] = {
    **{name: ("sagelaunch.profiler.api", name) for name in _API},
    "smprof": ("sagelaunch.profiler.smprof", None),
    "load_profile": ("sagelaunch.profiler.loader", "load_profile"),
    "analyze": ("sagelaunch.profiler.analysis", "analyze"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'profiler' has no attribute {name!r}")
    module_name, attribute = _EXPORTS[name]
    module = importlib.import_module(module_name)
    return module if attribute is None else getattr(module, attribute)
