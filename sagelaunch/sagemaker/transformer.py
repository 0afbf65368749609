"""v2's sagemaker.transformer."""
from sagelaunch.estimators.transformer import Transformer

__all__ = ["Transformer"]
