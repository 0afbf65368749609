"""A pydantic model that also takes the SageMaker SDK v2's positional arguments, in v2's order."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict


class V2Args(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    POSITIONAL: ClassVar[tuple[str, ...]] = ()  # v2's parameter order

    def __init__(self, *args: Any, **data: Any) -> None:
        owner = type(self).__name__
        if len(args) > len(self.POSITIONAL):
            raise TypeError(f"{owner} takes at most {len(self.POSITIONAL)} positional arguments "
                            f"({', '.join(self.POSITIONAL)}); pass the others by name")
        for name, value in zip(self.POSITIONAL, args):
            if name in data:
                raise TypeError(f"{owner} got {name!r} both by position and by name")
            data[name] = value
        super().__init__(**data)
