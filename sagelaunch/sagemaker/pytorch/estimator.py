"""v2's sagemaker.pytorch.estimator."""
from estimators import PyTorch

__all__ = ["PyTorch"]
