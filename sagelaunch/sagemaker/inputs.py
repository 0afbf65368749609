"""v2's sagemaker.inputs."""
from estimators.inputs import ShuffleConfig, TrainingInput

__all__ = ["TrainingInput", "ShuffleConfig"]
