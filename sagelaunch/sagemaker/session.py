"""v2's sagemaker.session."""
from sagelaunch.estimators.session import Session, get_execution_role

__all__ = ["Session", "get_execution_role"]
