"""pydantic ValidationError → one line per problem, each naming its field (`a.b: message (got …)`); values
shown short."""

from __future__ import annotations

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
        value = e.get("input")
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
