"""v2's sagemaker.pytorch.model."""
from estimators import PyTorchModel

__all__ = ["PyTorchModel"]
