"""v2's sagemaker.tensorflow.model."""
from sagelaunch.estimators import TensorFlowModel

__all__ = ["TensorFlowModel"]
