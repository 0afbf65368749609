"""v2's sagemaker.huggingface.estimator."""
from sagelaunch.estimators import HuggingFace

__all__ = ["HuggingFace"]
