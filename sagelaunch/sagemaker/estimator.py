"""v2's sagemaker.estimator: its framework base class (sagelaunch has no image-first generic Estimator)."""
from sagelaunch.estimators.base import FrameworkEstimator as Framework

__all__ = ["Framework"]
