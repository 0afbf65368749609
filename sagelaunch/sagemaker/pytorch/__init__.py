"""v2's sagemaker.pytorch."""
from estimators import PyTorch, PyTorchModel

__all__ = ["PyTorch", "PyTorchModel"]
