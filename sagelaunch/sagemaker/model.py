"""v2's sagemaker.model: `Model` is sagelaunch's own (README: where we differ), `FrameworkModel` v2's base."""
from estimators import Model
from estimators.framework_model import FrameworkModel

__all__ = ["Model", "FrameworkModel"]
