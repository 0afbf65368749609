"""v2's sagemaker.pytorch.estimator."""
from sagelaunch.estimators import PyTorch

__all__ = ["PyTorch"]
