"""Make a failed estimator construction report everything, each line with its fix.

pydantic stops before the model-level (cross-field) checks as soon as one field is invalid, and
says only "Extra inputs are not permitted" for a misspelt argument. `explain` rebuilds the
ValidationError: unknown arguments get a "did you mean …?" from the model's field names, and the
cross-field checks that do not depend on an invalid field are run and added, so one run of
`sagelaunch validate` lists every independent problem.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import TypeAdapter, ValidationError
from pydantic_core import ErrorDetails, InitErrorDetails, PydanticCustomError

from sagelaunch.estimators.resolve import cross_field_problems
from sagelaunch.jobspec.errors import SagelaunchException, masked, shown
from sagelaunch.jobspec.suggest import did_you_mean

if TYPE_CHECKING:
    from pydantic_core import PydanticCustomError

    from sagelaunch.estimators.arguments import EstimatorArguments


# arguments the SDK v2 still takes that SageMaker or the SDK retired: refused by name, never dropped
_RENAMED = {"train_instance_count": "instance_count", "train_instance_type": "instance_type",
            "train_max_run": "max_run", "train_use_spot_instances": "use_spot_instances", "train_max_wait": "max_wait",
            "train_volume_size": "volume_size", "train_volume_kms_key": "volume_kms_key", "image_name": "image_uri",
            "distributions": "distribution"}
RETIRED_ARGUMENTS = {
    "compiler_config": "SageMaker Training Compiler is retired: AWS publishes no Training Compiler containers "
                       "after PyTorch 1.13.1 and no longer develops it; drop compiler_config (torch.compile in "
                       "your script is the current way to compile a model)",
    **{old: f"{old!r} is the SDK v1 name, retired in SDK v2 (which only warns); use {new}=… instead"
       for old, new in _RENAMED.items()},
}


def unknown_argument_error(name: str, fields: Any, owner: str) -> PydanticCustomError:
    """The extra_forbidden error for `name`, with the closest field name as a suggestion (or why it is retired)."""
    if name in RETIRED_ARGUMENTS:
        return PydanticCustomError("extra_forbidden", "{owner} argument '{name}' is refused: {why}",
                                   {"owner": owner, "name": name, "why": RETIRED_ARGUMENTS[name]})
    hint = did_you_mean(name, list(fields))
    return PydanticCustomError(
        "extra_forbidden", "Extra inputs are not permitted: {owner} has no argument '{name}'{hint}",
        {"owner": owner, "name": name, "hint": hint},
    )


class ShownInput:
    """A container input as pydantic keeps it for its message: printed short, never whole (see jobspec.errors.shown)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return shown(self.value)


def _input(value: Any) -> Any:
    return ShownInput(value) if isinstance(value, (dict, list, tuple, set, frozenset)) else value


def _details(error: ErrorDetails, cls: type[EstimatorArguments]) -> InitErrorDetails:
    """An error of err.errors() as InitErrorDetails (extra_forbidden gets its suggestion)."""
    if error["type"] == "extra_forbidden" and len(error["loc"]) == 1:
        kind = unknown_argument_error(str(error["loc"][0]), cls.argument_names(), cls.__name__)
        return {"type": kind, "loc": error["loc"], "input": _input(error["input"])}
    value = masked(tuple(error["loc"]), error["input"])  # never print a token, password or secret variable
    details: InitErrorDetails = {"type": error["type"], "loc": error["loc"], "input": _input(value)}
    if error.get("ctx"):
        details["ctx"] = error["ctx"]
    return details


def _validated_values(cls: type[EstimatorArguments], data: dict[str, Any], invalid: set[str]) -> dict[str, Any]:
    """Field values for a partial estimator: valid inputs coerced to their field types, else the default."""
    values: dict[str, Any] = {}
    for name, info in cls.model_fields.items():
        default = None if info.is_required() else info.get_default(call_default_factory=True)
        argument = info.alias or name  # data and `invalid` use the constructor's names
        if argument not in data or argument in invalid:
            values[name] = data.get(argument, default) if name == "instance_type" else default
            continue
        try:
            values[name] = TypeAdapter(info.annotation if info.annotation is not None else Any).validate_python(
                data[argument])
        except Exception:  # a shape only its field validator accepts (tags as a dict): not needed here
            values[name] = default
    return values


def cross_field_errors(cls: type[EstimatorArguments], data: dict[str, Any],
                       invalid: set[str]) -> list[SagelaunchException]:
    """The cross-field problems that do not involve an invalid field."""
    try:
        given = set(data) & set(cls.model_fields)  # what the user set (v2 defaults depend on it)
        partial = cls.model_construct(_fields_set=given, **_validated_values(cls, data, invalid))
        return cross_field_problems(partial, frozenset(invalid)).problems
    except Exception:  # the field errors are reported anyway; never hide them behind a second failure
        return []


def explain(cls: type[EstimatorArguments], data: Any, err: ValidationError) -> ValidationError:
    errors = err.errors()
    line_errors: list[InitErrorDetails] = [_details(e, cls) for e in errors]
    field_errors = [e for e in errors if e["loc"]]
    if isinstance(data, dict) and field_errors and len(field_errors) == len(errors):
        invalid = {str(e["loc"][0]) for e in field_errors}
        for problem in cross_field_errors(cls, data, invalid):
            line_errors.append({"type": "value_error", "loc": (), "input": _input(data), "ctx": {"error": problem}})
    try:
        return ValidationError.from_exception_data(err.title, line_errors)
    except Exception:  # an error type we cannot rebuild: the original is still correct
        return err
