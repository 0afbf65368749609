"""v2's sagemaker.tensorflow.model."""
from estimators import TensorFlowModel

__all__ = ["TensorFlowModel"]
