"""v2's sagemaker.huggingface.model."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators import HuggingFaceModel

__all__ = ["HuggingFaceModel"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
