"""v2's sagemaker.estimator: the generic image-based Estimator and the framework base class."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators.base import FrameworkEstimator as Framework
from sagelaunch.estimators.generic import Estimator

__all__ = ["Estimator", "Framework"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
