"""v2's sagemaker.huggingface.model."""
from sagelaunch.estimators import HuggingFaceModel

__all__ = ["HuggingFaceModel"]
