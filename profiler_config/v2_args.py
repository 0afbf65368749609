"""A pydantic model that also takes the SageMaker SDK v2's positional arguments, in v2's order."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict
from jobspec.positional import bind_positional


class V2Args(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    POSITIONAL: ClassVar[tuple[str, ...]] = ()  # v2's parameter order

    def __init__(self, *args: Any, **data: Any) -> None:
        super().__init__(**bind_positional(type(self).__name__, self.POSITIONAL, args, data))
