"""v2's sagemaker.huggingface."""
from estimators import HuggingFace, HuggingFaceModel

__all__ = ["HuggingFace", "HuggingFaceModel"]
