"""v2's sagemaker.pytorch."""
from sagelaunch.estimators import PyTorch, PyTorchModel

__all__ = ["PyTorch", "PyTorchModel"]
