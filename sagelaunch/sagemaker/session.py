"""v2's sagemaker.session."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators.session import Session, get_execution_role

__all__ = ["Session", "get_execution_role"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
