"""pydantic ValidationError → one line per problem, each naming its field (`a.b: message (got …)`); values
shown short."""

from __future__ import annotations

import re
import reprlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


def validation_error_text(prefix: str, err: "ValidationError") -> str:
    """`prefix.loc: msg (got value)` per error, joined by "; ". A message that already starts with
    `prefix` (the models' own cross-field messages name their field) is kept as it is."""
    lines = []
    for e in err.errors():
        msg = e["msg"].removeprefix("Value error, ")
        if prefix and msg.startswith(prefix):
            lines.append(msg)
            continue
        loc = ".".join(str(p) for p in (prefix, *e["loc"]) if p != "")
        value = masked(tuple(e["loc"]), e.get("input"))
        got = "" if isinstance(value, dict) or e["type"] == "missing" else f" (got {shown(value)})"
        lines.append(f"{loc}: {msg}{got}")
    return "; ".join(lines)


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
