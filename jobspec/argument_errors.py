"""A pydantic model's rejected arguments as a member of sagelaunch's error family (jobspec.errors): still
pydantic's ValidationError (its text, `errors()`), so `except ValidationError` and `except ValueError` keep working."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from pydantic import ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from sagelaunch.jobspec.errors import ProblemsError, SagelaunchException, validation_problems


class ArgumentErrors(ValidationError, ProblemsError):
    """A model's rejected arguments (an estimator's, a profiler config's): pydantic's ValidationError, as before (its
    text, `errors()`), and the family's ProblemsError: `problems` holds one error per problem, each naming its field."""

    def __init__(self, *args: Any) -> None:  # built by pydantic's from_exception_data, which sets everything
        pass

    @classmethod
    def of(cls, err: ValidationError) -> "ArgumentErrors":
        """The same errors (types, messages, inputs, the validators' own exceptions) in this class."""
        details: list[InitErrorDetails] = []
        for e in err.errors():
            same: InitErrorDetails = {"type": e["type"], "loc": e["loc"], "input": e["input"]}
            if e.get("ctx"):
                same["ctx"] = e["ctx"]
            try:
                rebuilt = ValidationError.from_exception_data(err.title, [same]).errors()[0]["msg"] == e["msg"]
            except Exception:  # a custom error type (explain's extra_forbidden): its message is kept as written
                rebuilt = False
            details.append(same if rebuilt else {
                "type": PydanticCustomError(e["type"], e["msg"].replace("{", "{{").replace("}", "}}")),
                "loc": e["loc"], "input": e["input"]})
        return cls.from_exception_data(err.title, details)

    @property
    def problems(self) -> list[SagelaunchException]:  # type: ignore[override]
        return validation_problems("", self)

    def _first(self, part: str) -> Any:
        problems = self.problems
        return getattr(problems[0], part) if problems else None

    field = property(lambda self: self._first("field"))
    value = property(lambda self: self._first("value"))
    allowed = property(lambda self: self._first("allowed"))
    fix = property(lambda self: self._first("fix"))


@contextmanager
def argument_errors() -> Iterator[None]:
    """A ValidationError raised inside leaves as ArgumentErrors (the same errors, in the family)."""
    try:
        yield
    except ArgumentErrors:
        raise
    except ValidationError as err:
        raise ArgumentErrors.of(err) from None
