"""v2's sagemaker.transformer."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators.transformer import Transformer

__all__ = ["Transformer"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
