"""v2's sagemaker.instance_group."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators.instance_group import InstanceGroup

__all__ = ["InstanceGroup"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
