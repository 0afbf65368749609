"""v2's sagemaker.analytics (the tuning job's analytics)."""
from sagelaunch.estimators.tuner import HyperparameterTuningJobAnalytics

__all__ = ["HyperparameterTuningJobAnalytics"]
