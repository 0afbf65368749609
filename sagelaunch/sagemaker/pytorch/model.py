"""v2's sagemaker.pytorch.model."""
from sagelaunch.estimators import PyTorchModel

__all__ = ["PyTorchModel"]
