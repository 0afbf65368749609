"""Estimators a user constructs: `PyTorch`, `TensorFlow`, `HuggingFace` (and `TrainingInput` for fit's inputs); the models
they deploy: `PyTorchModel`, `TensorFlowModel` (SageMaker SDK v2's) and sagelaunch's `Model`.

Importing this package is cheap: no torch, boto3, transformers, numpy or sagemaker; the support
matrix loads on first use.
"""

from estimators.base import FrameworkEstimator
from estimators.framework_model import HuggingFaceModel, PyTorchModel, TensorFlowModel
from estimators.huggingface import HuggingFace
from estimators.inputs import ShuffleConfig, TrainingInput
from estimators.instance_group import InstanceGroup
from estimators.model import Model
from estimators.pytorch import PyTorch
from estimators.retired import TrainingCompilerConfig
from estimators.session import Session
from estimators.tensorflow import TensorFlow

__all__ = ["PyTorch", "TensorFlow", "HuggingFace", "TrainingInput", "ShuffleConfig", "InstanceGroup", "Session",
           "FrameworkEstimator", "TrainingCompilerConfig", "PyTorchModel", "TensorFlowModel", "HuggingFaceModel", "Model"]
