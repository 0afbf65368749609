"""pydantic ValidationError → one line per problem, each naming its field (`a.b: message (got …)`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

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
        shown = "" if isinstance(value, dict) or e["type"] == "missing" else f" (got {value!r})"
        lines.append(f"{loc}: {msg}{shown}")
    return "; ".join(lines)
