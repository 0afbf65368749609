"""A pydantic model that also takes the SageMaker SDK v2's positional arguments, in v2's order."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.argument_errors import argument_errors
from sagelaunch.jobspec.positional import bind_positional


class V2Args(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    POSITIONAL: ClassVar[tuple[str, ...]] = ()  # v2's parameter order

    def __init__(self, *args: Any, **data: Any) -> None:
        with argument_errors():  # the same ValidationError, as a member of sagelaunch's family too
            super().__init__(**bind_positional(type(self).__name__, self.POSITIONAL, args, data))

    def __setattr__(self, name: str, value: Any) -> None:
        with argument_errors():
            super().__setattr__(name, value)
