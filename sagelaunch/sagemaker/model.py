"""v2's sagemaker.model: `Model` is sagelaunch's own (README: where we differ), `FrameworkModel` v2's base."""
from sagelaunch.estimators import Model
from sagelaunch.estimators.framework_model import FrameworkModel

__all__ = ["Model", "FrameworkModel"]
