"""The toolkit's `environment.Environment` in a local job: the same properties, read from SM_TRAINING_ENV (which the
local backend writes from the job's request as SageMaker's container does), and `to_env_vars()` / `to_cmd_args()`
as the toolkit gives them. Its paths are the local job's own (the job's /opt/ml imitation), not /opt/ml."""

from __future__ import annotations

import json
import os
from typing import Any

_MISSING_FIX = "run the script as a sagelaunch local job (or SageMaker job), whose SM_TRAINING_ENV describes it"


def _training_env() -> dict[str, Any]:
    text = os.environ.get("SM_TRAINING_ENV")
    if not text:
        raise RuntimeError(f"sagemaker_training.environment: SM_TRAINING_ENV is not set, so there is no training job "
                           f"to describe; {_MISSING_FIX}")
    return json.loads(text)


class Environment:
    """A read-only snapshot of the job's container environment (the toolkit's Environment)."""

    def __init__(self, resource_config: Any = None, input_data_config: Any = None, hyperparameters: Any = None):
        given = [n for n, v in (("resource_config", resource_config), ("input_data_config", input_data_config),
                                ("hyperparameters", hyperparameters)) if v is not None]
        if given:
            raise TypeError(f"Environment({', '.join(given)}=…): sagelaunch's stand-in describes the running job "
                            "only; call Environment() with no arguments")
        self._properties = _training_env()

    def __getattr__(self, name: str) -> Any:
        properties = self.__dict__.get("_properties", {})
        if name in properties:
            return properties[name]
        raise AttributeError(f"sagemaker_training's Environment has no {name!r} in this local job; its properties: "
                             f"{', '.join(sorted(properties))}")

    def properties(self) -> list[str]:
        return sorted(self._properties)

    @property
    def sagemaker_s3_output(self) -> str | None:
        return self._properties.get("additional_framework_parameters", {}).get("sagemaker_s3_output")

    @property
    def distribution_enabled(self) -> bool:
        return self._properties.get("current_instance_group") in self._properties.get("distribution_instance_groups", [])

    def to_env_vars(self) -> dict[str, str]:
        """The SM_* variables the toolkit exports for the script: the job's own."""
        return {k: v for k, v in os.environ.items() if k.startswith("SM_")}

    def to_cmd_args(self) -> list[str]:
        """The script's arguments as the toolkit makes them from the hyperparameters (the job's SM_USER_ARGS)."""
        return json.loads(os.environ.get("SM_USER_ARGS", "[]"))

    def __str__(self) -> str:
        return str(self._properties)
