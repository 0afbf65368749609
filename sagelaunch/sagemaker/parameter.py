"""v2's sagemaker.parameter."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators.parameter_ranges import (CategoricalParameter, ContinuousParameter, IntegerParameter,
                                                    ParameterRange)

__all__ = ["ParameterRange", "ContinuousParameter", "IntegerParameter", "CategoricalParameter"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
