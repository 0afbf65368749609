"""Estimators a user constructs: `PyTorch`, `TensorFlow`, `HuggingFace` (and `TrainingInput` for fit's inputs); the models
they deploy: `PyTorchModel`, `TensorFlowModel` (SageMaker SDK v2's) and sagelaunch's `Model`.

Importing this package is cheap: no torch, boto3, transformers, numpy or sagemaker; the support
matrix loads on first use.
"""

from sagelaunch.estimators.base import FrameworkEstimator
from sagelaunch.estimators.generic import Estimator
from sagelaunch.estimators.framework_model import HuggingFaceModel, PyTorchModel, TensorFlowModel
from sagelaunch.estimators.huggingface import HuggingFace
from sagelaunch.estimators.inputs import ShuffleConfig, TrainingInput
from sagelaunch.estimators.instance_group import InstanceGroup
from sagelaunch.estimators.model import Model
from sagelaunch.estimators.pytorch import PyTorch
from sagelaunch.estimators.retired import TrainingCompilerConfig
from sagelaunch.estimators.session import Session
from sagelaunch.estimators.tensorflow import TensorFlow

__all__ = ["Estimator", "PyTorch", "TensorFlow", "HuggingFace", "TrainingInput", "ShuffleConfig", "InstanceGroup", "Session",
           "FrameworkEstimator", "TrainingCompilerConfig", "PyTorchModel", "TensorFlowModel", "HuggingFaceModel", "Model"]
