"""v2's sagemaker.estimator: the generic image-based Estimator and the framework base class."""
from sagelaunch.estimators.base import FrameworkEstimator as Framework
from sagelaunch.estimators.generic import Estimator

__all__ = ["Estimator", "Framework"]
