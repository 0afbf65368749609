"""v2's sagemaker.tensorflow."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators import TensorFlow, TensorFlowModel

__all__ = ["TensorFlow", "TensorFlowModel"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
