"""v2's sagemaker.tensorflow.estimator."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators import TensorFlow

__all__ = ["TensorFlow"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
