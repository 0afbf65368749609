"""v2's sagemaker.inputs."""
from sagelaunch.estimators.inputs import ShuffleConfig, TrainingInput

__all__ = ["TrainingInput", "ShuffleConfig"]
