"""SDK v2's tuning job settings objects: WarmStartConfig / WarmStartTypes and the Hyperband StrategyConfig."""

from __future__ import annotations

from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError


class WarmStartTypes:
    """v2's warm start types (an enum there; its values are what the request holds)."""

    IDENTICAL_DATA_AND_ALGORITHM = "IdenticalDataAndAlgorithm"
    TRANSFER_LEARNING = "TransferLearning"


class WarmStartConfig:
    """v2's WarmStartConfig(warm_start_type, parents): parent tuning jobs whose results start this one."""

    def __init__(self, warm_start_type: str = WarmStartTypes.IDENTICAL_DATA_AND_ALGORITHM,
                 parents: Any = None) -> None:
        warm_start_type = getattr(warm_start_type, "value", warm_start_type)
        allowed = (WarmStartTypes.IDENTICAL_DATA_AND_ALGORITHM, WarmStartTypes.TRANSFER_LEARNING)
        if warm_start_type not in allowed:
            raise SagelaunchError(f"warm_start_type={warm_start_type!r} is not one of {', '.join(allowed)}",
                                  field="warm_start_type", value=warm_start_type, allowed=", ".join(allowed),
                                  fix="use WarmStartTypes.IDENTICAL_DATA_AND_ALGORITHM or TRANSFER_LEARNING")
        if not parents:
            raise SagelaunchError("WarmStartConfig needs parents: the names of finished tuning jobs", field="parents",
                                  value=parents, allowed="1 to 5 tuning job names", fix="parents={'my-tuning-job'}")
        self.type = warm_start_type
        self.parents = set(parents)

    def to_input_req(self) -> dict[str, Any]:
        return {"WarmStartType": self.type,
                "ParentHyperParameterTuningJobs": [{"HyperParameterTuningJobName": p} for p in self.parents]}


class HyperbandStrategyConfig:
    def __init__(self, min_resource: int | None = None, max_resource: int | None = None) -> None:
        self.min_resource, self.max_resource = min_resource, max_resource

    def to_input_req(self) -> dict[str, Any]:
        return {k: v for k, v in (("MinResource", self.min_resource), ("MaxResource", self.max_resource))
                if v is not None}


class StrategyConfig:
    def __init__(self, hyperband_strategy_config: HyperbandStrategyConfig) -> None:
        self.hyperband_strategy_config = hyperband_strategy_config

    def to_input_req(self) -> dict[str, Any]:
        return {"HyperbandStrategyConfig": self.hyperband_strategy_config.to_input_req()}
