"""SageMaker SDK v2's module tree, mirrored: a v2 notebook runs on sagelaunch after ONE textual rule —
`sagemaker` → `sagelaunch.sagemaker` in its import lines (`import sagemaker` → `import sagelaunch.sagemaker as
sagemaker`); scripts/sdk_v2_oracle.py `swap_imports` applies it, README states it.

Each module re-exports sagelaunch's classes under v2's path; nothing is defined here. Importing this package
is as light as `import sagelaunch.estimators` (no torch, no boto3); v2's submodules load when first reached
(`sagemaker.pytorch.PyTorch` after `import sagemaker`, as v2's own __init__ makes them reachable).
"""

import importlib

from sagelaunch.estimators import Model, TrainingInput
from sagelaunch.estimators.session import Session, get_execution_role
from sagelaunch.profiler_config import Profiler, ProfilerConfig
from sagelaunch.sagemaker import _not_mirrored

__version__ = "2.257.7"  # the SDK v2 release whose requests sagelaunch matches (tests/parity_v2)

_SUBMODULES = ("analytics", "debugger", "deserializers", "estimator", "huggingface", "image_uris", "inputs", "instance_group",
               "model", "parameter",
               "pytorch", "s3", "serializers", "session", "tensorflow", "transformer", "tuner")


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name == "HyperparameterTuningJobAnalytics":  # v2 exports it here; its module loads pandas only when used
        return importlib.import_module(f"{__name__}.analytics").HyperparameterTuningJobAnalytics
    if name.startswith("_"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    raise _not_mirrored.not_mirrored(f"{__name__}.{name}")  # a v2 name we lack: refused by name


_not_mirrored.install()


__all__ = ["Session", "get_execution_role", "TrainingInput", "Model", "ProfilerConfig", "Profiler", "__version__"]
