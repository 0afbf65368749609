"""v2's sagemaker.parameter."""
from sagelaunch.estimators.parameter_ranges import (CategoricalParameter, ContinuousParameter, IntegerParameter,
                                                    ParameterRange)

__all__ = ["ParameterRange", "ContinuousParameter", "IntegerParameter", "CategoricalParameter"]
