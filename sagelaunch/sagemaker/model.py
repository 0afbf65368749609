"""v2's sagemaker.model: `Model` is sagelaunch's own (README: where we differ), `FrameworkModel` v2's base."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators import Model
from sagelaunch.estimators.framework_model import FrameworkModel

__all__ = ["Model", "FrameworkModel"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
