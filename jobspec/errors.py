"""sagelaunch's errors: one family, one line per problem, secrets never shown.

The family (catch the root to catch anything sagelaunch raises on purpose):

    SagelaunchException                  the root; every error carries `field`, `value`, `allowed`, `fix`
    ├── SagelaunchError(ValueError)      a rejected input: the message names the field, the value, what is
    │   │                                allowed and a fix (`except ValueError` keeps working)
    │   ├── SagelaunchTypeError(TypeError)   an input of the wrong type, where callers may catch TypeError
    │   └── ProblemsError                every independent problem at once (`problems`, one line each);
    │       └── ArgumentErrors           a model's rejected arguments, also pydantic's ValidationError
    │                                    (jobspec.argument_errors)
    └── SagelaunchRuntimeError(RuntimeError)  a failure while running (a job failed, an AWS call failed, a worker
                                         was lost): not the input's fault, so never a ValueError

Outside it on purpose: three private control-flow exceptions caught in their own module, four bare
ValueError/TypeError raises no user can see (caught in their own function, or json.dumps's protocol; both lists in
tests/foundation/test_error_family.py), and scripts/ (it runs in inference images without sagelaunch).

Also here: pydantic ValidationError → one line per problem, each naming its field (`a.b: message (got …)`);
values shown short, secret ones hidden.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


def validation_error_text(prefix: str, err: "ValidationError") -> str:
    """`prefix.loc: msg (got value)` per error, joined by "; ". A message that already starts with
    `prefix` (the models' own cross-field messages name their field) is kept as it is."""
    return "; ".join(str(p) for p in validation_problems(prefix, err))


def validation_problems(prefix: str, err: "ValidationError") -> list["SagelaunchException"]:
    """One SagelaunchError per error of `err`, its message `prefix.loc: msg (got value)`, its field `prefix.loc`;
    a validator's own family error lends its parts (it knows its field better than pydantic's location), and a
    model's ProblemsError its problems as they were written (family errors, not only SagelaunchErrors)."""
    problems: list[SagelaunchException] = []
    for e in err.errors():
        msg = e["msg"].removeprefix("Value error, ")
        loc = ".".join(str(p) for p in (prefix, *e["loc"]) if p != "")
        value = masked(tuple(e["loc"]), e.get("input"))
        cause = (e.get("ctx") or {}).get("error")
        if isinstance(cause, ProblemsError):  # a model's cross-field checks: each problem as it was written
            problems.extend(cause.problems)
            continue
        parts = cause.parts() if isinstance(cause, SagelaunchException) and cause.field else {"field": loc, "value": value}
        if prefix and msg.startswith(prefix):
            problems.append(SagelaunchError(msg, **parts))
            continue
        got = "" if isinstance(value, dict) or e["type"] == "missing" else f" (got {shown(value)})"
        problems.append(SagelaunchError(f"{loc}: {msg}{got}", **parts))
    return problems


def cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict, _SHORT.maxset = 3, 5, 5, 5, 5
_SHORT.maxstring, _SHORT.maxother = 60, 200


def shown(value: Any, limit: int = 80) -> str:
    """repr for error messages, cut to `limit` characters without building the whole repr first (a list that
    repeats itself by reference a billion times has a repr of gigabytes; one nested 5,000 deep has none)."""
    return cut(_SHORT.repr(value), limit)


# a name that says its value is a credential: such values are never printed in an error or a log line
SECRET_NAME = re.compile(r"(secret|passw|pwd|token|credential|private|api_?key|access_?key|auth|cookie|session"
                         r"|signature|(^|[_.\-])key($|[_.\-]))", re.IGNORECASE)


def looks_secret(name: Any) -> bool:
    return isinstance(name, str) and SECRET_NAME.search(name) is not None


HIDDEN = "<hidden>"


def secret_shown(name: Any, value: Any) -> str:
    """`shown(value)`, or a placeholder when `name` looks like a secret's (DB_PASSWORD, api_token…)."""
    return HIDDEN if looks_secret(name) else shown(value)


def masked(loc: tuple[Any, ...], value: Any) -> Any:
    """An error's input with every secret-looking entry hidden: the whole value when a part of its location looks
    secret (environment.DB_PASSWORD), else a mapping's secret-looking entries (the environment dict itself)."""
    if any(looks_secret(part) for part in loc):
        return HIDDEN
    if isinstance(value, dict):
        return {k: HIDDEN if looks_secret(k) else v for k, v in value.items()}
    return value


class SagelaunchException(Exception):
    """The root of sagelaunch's errors. `message` is the one-line text users read (kept as the raise site wrote it);
    `field` the argument or setting at fault, `value` what it was given (hidden when the field looks secret),
    `allowed` what it accepts and `fix` what to do; each is empty (value None) where the site has nothing to say."""

    def __init__(self, message: str = "", *, field: str = "", value: Any = None, allowed: str = "",
                 fix: str = "") -> None:
        super().__init__(message)
        self.field, self.allowed, self.fix = field, allowed, fix
        self.value = HIDDEN if looks_secret(field) and value is not None else value

    def parts(self) -> dict[str, Any]:
        """field, value, allowed and fix: for another error of the family that reports this one."""
        return {"field": self.field, "value": self.value, "allowed": self.allowed, "fix": self.fix}


class SagelaunchError(SagelaunchException, ValueError):
    """A rejected input (a ValueError, so `except ValueError` keeps working)."""


class SagelaunchTypeError(SagelaunchError, TypeError):
    """A rejected input of the wrong type, where SDK v2 or Python raise TypeError (callers may catch either)."""


class SagelaunchRuntimeError(SagelaunchException, RuntimeError):
    """A failure while running, not an input mistake (a RuntimeError, as before the family existed)."""


class ProblemsError(SagelaunchError):
    """Every independent problem at once: `problems` keeps each one as a SagelaunchError, the message lists their
    texts one per line. `field`, `value`, `allowed` and `fix` are the first problem's."""

    def __init__(self, problems: Iterable[SagelaunchException | str]) -> None:
        self.problems: list[SagelaunchException] = []
        for p in problems:  # a ProblemsError among them adds its own problems: the list stays flat
            if isinstance(p, ProblemsError):
                self.problems.extend(p.problems)
            else:
                self.problems.append(problem_of(p) if isinstance(p, BaseException) else SagelaunchError(p))
        first = self.problems[0] if self.problems else SagelaunchError()
        super().__init__("\n".join(str(p) for p in self.problems), field=first.field, value=first.value,
                         allowed=first.allowed, fix=first.fix)

    def __reduce__(self) -> tuple[Any, ...]:  # the constructor takes the list, not the message
        return type(self), (self.problems,)


def parts_of(err: BaseException) -> dict[str, Any]:
    """An error's field, value, allowed and fix (none for an error outside the family)."""
    return err.parts() if isinstance(err, SagelaunchException) else {}


def validation_error(cls: type[SagelaunchError], prefix: str, err: "ValidationError") -> SagelaunchError:
    """`err` as one `cls` error: validation_error_text's message, the first problem's field, value, allowed, fix."""
    problems = validation_problems(prefix, err)
    return cls("; ".join(str(p) for p in problems), **(problems[0].parts() if problems else {}))


def problem_of(err: BaseException) -> SagelaunchException:
    """`err` as a member of the family: itself, or its text with no parts (a pydantic or library ValueError)."""
    return err if isinstance(err, SagelaunchException) else SagelaunchError(str(err))
