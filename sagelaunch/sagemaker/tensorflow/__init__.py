"""v2's sagemaker.tensorflow."""
from estimators import TensorFlow, TensorFlowModel

__all__ = ["TensorFlow", "TensorFlowModel"]
