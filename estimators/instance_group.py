"""InstanceGroup: one group of a heterogeneous cluster, as the SageMaker SDK v2's
`sagemaker.instance_group.InstanceGroup(instance_group_name, instance_type, instance_count)`."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from sagelaunch.jobspec import catalog
from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.positional import bind_positional

GROUP_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-_.]{0,63}$")
POSITIONAL = ("instance_group_name", "instance_type", "instance_count")


class InstanceGroup(BaseModel):
    """`InstanceGroup("workers", "ml.g5.xlarge", 2)`: sent as ResourceConfig.InstanceGroups."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True, frozen=True)

    instance_group_name: str
    instance_type: str
    instance_count: int

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(**bind_positional("InstanceGroup", POSITIONAL, args, kwargs))

    @field_validator("instance_group_name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not GROUP_NAME.match(v):
            allowed = "1-64 of A-Z a-z 0-9 - _ . starting with a letter or digit"
            raise SagelaunchError(f"instance_group_name={v!r} is not valid; allowed: {allowed}, e.g. 'workers'",
                                  field="instance_group_name", value=v, allowed=allowed, fix="e.g. 'workers'")
        return v

    @field_validator("instance_type")
    @classmethod
    def _type(cls, v: str) -> str:
        if is_local(v):
            fix = "for a local run use instance_type='local' without instance_groups"
            raise SagelaunchError(f"instance_type={v!r}: a heterogeneous cluster (instance_groups) runs on SageMaker "
                                  f"only; allowed: an ml.* training instance type — {fix}", field="instance_type",
                                  value=v, allowed="an ml.* training instance type", fix=fix)
        return catalog.check_instance_type(v)

    @field_validator("instance_count")
    @classmethod
    def _count(cls, v: int) -> int:
        if not 1 <= v <= 1000:
            raise SagelaunchError(f"instance_count={v!r} is not valid; allowed: 1..1000", field="instance_count",
                                  value=v, allowed="1..1000", fix="use 1 to 1000 instances")
        return v

    def _to_request_dict(self) -> dict[str, Any]:  # the SDK v2's name for it
        return {"InstanceGroupName": self.instance_group_name, "InstanceType": self.instance_type,
                "InstanceCount": self.instance_count}
