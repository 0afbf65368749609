"""v2's sagemaker.tensorflow."""
from sagelaunch.estimators import TensorFlow, TensorFlowModel

__all__ = ["TensorFlow", "TensorFlowModel"]
