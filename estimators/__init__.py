"""Estimators a user constructs: `PyTorch`, `TensorFlow` (and `TrainingInput` for fit's inputs).

Importing this package is cheap: no torch, boto3, transformers or sagemaker; the support
matrix loads on first use.
"""

from estimators.base import FrameworkEstimator
from estimators.inputs import ShuffleConfig, TrainingInput
from estimators.instance_group import InstanceGroup
from estimators.pytorch import PyTorch
from estimators.retired import TrainingCompilerConfig
from estimators.session import Session
from estimators.tensorflow import TensorFlow

__all__ = ["PyTorch", "TensorFlow", "TrainingInput", "ShuffleConfig", "InstanceGroup", "Session", "FrameworkEstimator",
           "TrainingCompilerConfig"]
