"""v2's sagemaker.tensorflow.estimator."""
from estimators import TensorFlow

__all__ = ["TensorFlow"]
