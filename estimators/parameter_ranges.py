"""SDK v2's hyperparameter ranges (sagemaker.parameter / sagemaker.tuner): ContinuousParameter, IntegerParameter,
CategoricalParameter, each as v2 writes it into ParameterRanges."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.suggest import did_you_mean, fix_from_hint

SCALING_TYPES = ("Auto", "Linear", "Logarithmic", "ReverseLogarithmic")


class ParameterRange:
    """A numeric range [min_value, max_value] searched on a scale (v2's ParameterRange)."""

    __name__ = "ParameterRange"
    kind: ClassVar[str] = ""

    def __init__(self, min_value: float, max_value: float, scaling_type: str = "Auto") -> None:
        for name, value in (("min_value", min_value), ("max_value", max_value)):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise SagelaunchError(f"{type(self).__name__}({name}={value!r}) must be a number", field=name,
                                      value=value, allowed="a number", fix=f"pass {name} as a number")
        if min_value > max_value:
            raise SagelaunchError(f"{type(self).__name__}: min_value={min_value} is above max_value={max_value}",
                                  field="min_value", value=min_value, allowed=f"at most {max_value}",
                                  fix="swap them")
        if scaling_type not in SCALING_TYPES:
            fix = fix_from_hint(did_you_mean(str(scaling_type), SCALING_TYPES), f"use one of {', '.join(SCALING_TYPES)}")
            raise SagelaunchError(f"scaling_type={scaling_type!r} is not one of {', '.join(SCALING_TYPES)}; {fix}",
                                  field="scaling_type", value=scaling_type, allowed=", ".join(SCALING_TYPES), fix=fix)
        if scaling_type in ("Logarithmic", "ReverseLogarithmic") and min_value <= 0:
            raise SagelaunchError(f"scaling_type={scaling_type!r} needs min_value > 0 (got {min_value})",
                                  field="min_value", value=min_value, allowed="> 0 on a logarithmic scale",
                                  fix="raise min_value above 0 or use scaling_type='Linear'")
        self.min_value, self.max_value, self.scaling_type = min_value, max_value, scaling_type

    def is_valid(self, value: Any) -> bool:
        return self.min_value <= value <= self.max_value

    @classmethod
    def cast_to_type(cls, value: Any) -> Any:
        return float(value)

    def as_tuning_range(self, name: str) -> dict[str, Any]:
        return {"Name": name, "MinValue": str(self.min_value), "MaxValue": str(self.max_value),
                "ScalingType": self.scaling_type}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.min_value!r}, {self.max_value!r}, {self.scaling_type!r})"


class ContinuousParameter(ParameterRange):
    __name__ = "Continuous"
    kind = "Continuous"


class IntegerParameter(ParameterRange):
    __name__ = "Integer"
    kind = "Integer"

    @classmethod
    def cast_to_type(cls, value: Any) -> Any:
        return int(value)


class CategoricalParameter(ParameterRange):
    """A list of values (sent as strings; JSON-encoded for the framework images, as v2)."""

    __name__ = "Categorical"
    kind = "Categorical"

    def __init__(self, values: Any) -> None:  # noqa: D107 - v2's signature
        values = values if isinstance(values, list) else [values]
        if not values:
            raise SagelaunchError("CategoricalParameter([]) has no values", field="values", value=values,
                                  allowed="one value or more", fix="list the values to try")
        self.values = [str(v) for v in values]

    def is_valid(self, value: Any) -> bool:
        return value in self.values

    @classmethod
    def cast_to_type(cls, value: Any) -> Any:
        return str(value)

    def as_tuning_range(self, name: str) -> dict[str, Any]:
        return {"Name": name, "Values": list(self.values)}

    def as_json_range(self, name: str) -> dict[str, Any]:
        return {"Name": name, "Values": [json.dumps(v) for v in self.values]}

    def __repr__(self) -> str:
        return f"CategoricalParameter({self.values!r})"
