"""v2's sagemaker.analytics (the tuning job's analytics)."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators.tuner import HyperparameterTuningJobAnalytics

__all__ = ["HyperparameterTuningJobAnalytics"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
