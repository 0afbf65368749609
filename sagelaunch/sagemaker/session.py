"""v2's sagemaker.session."""
from estimators.session import Session, get_execution_role

__all__ = ["Session", "get_execution_role"]
