"""v2's sagemaker.inputs."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators.inputs import ShuffleConfig, TrainingInput

__all__ = ["TrainingInput", "ShuffleConfig"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
