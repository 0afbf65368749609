"""v2's sagemaker.huggingface.model."""
from estimators import HuggingFaceModel

__all__ = ["HuggingFaceModel"]
