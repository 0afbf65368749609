"""v2's sagemaker.huggingface.estimator."""
from estimators import HuggingFace

__all__ = ["HuggingFace"]
