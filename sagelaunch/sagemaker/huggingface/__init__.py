"""v2's sagemaker.huggingface."""
from sagelaunch.estimators import HuggingFace, HuggingFaceModel

__all__ = ["HuggingFace", "HuggingFaceModel"]
