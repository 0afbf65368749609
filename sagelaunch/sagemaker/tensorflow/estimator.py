"""v2's sagemaker.tensorflow.estimator."""
from sagelaunch.estimators import TensorFlow

__all__ = ["TensorFlow"]
