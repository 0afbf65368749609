"""v2's sagemaker.huggingface."""
from estimators import HuggingFace

__all__ = ["HuggingFace"]
