"""v2's sagemaker.instance_group."""
from sagelaunch.estimators.instance_group import InstanceGroup

__all__ = ["InstanceGroup"]
