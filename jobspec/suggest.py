"""Error-message helpers: name the field, the value, what is allowed, and a likely fix."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(value: object, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """' (did you mean X?)' for the closest choice, or '' when nothing is close."""
    import difflib  # only when an error is being written

    choices = list(choices)
    text = str(value)
    matches = difflib.get_close_matches(text, choices, n=1, cutoff=cutoff)
    if not matches:
        # a prefix such as ml.p4d.24xl → ml.p4d.24xlarge is a near miss difflib may rank low
        prefixed = [c for c in choices if c.startswith(text) or text.startswith(c)] if text else []
        matches = sorted(prefixed, key=lambda c: abs(len(c) - len(text)))[:1]
    return f" (did you mean {matches[0]!r}?)" if matches else ""


def allowed_list(choices: Iterable[object], limit: int = 12) -> str:
    items = [str(c) for c in choices]
    shown = ", ".join(items[:limit])
    return shown + (f", … ({len(items)} in all)" if len(items) > limit else "")


def invalid(field: str, value: object, allowed: Iterable[object] | str, fix: str = "") -> ValueError:
    """A ValueError that says field, value, allowed values and a fix."""
    allowed_text = allowed if isinstance(allowed, str) else allowed_list(allowed)
    if fix.startswith(" ("):  # a "did you mean" goes right after the value
        return ValueError(f"{field}={value!r} is not supported{fix}; allowed: {allowed_text}")
    return ValueError(f"{field}={value!r} is not supported; allowed: {allowed_text}" + (f"; {fix}" if fix else ""))


def choice_error(field: str, value: object, choices: Iterable[str]) -> ValueError:
    choices = list(choices)
    return invalid(field, value, choices, did_you_mean(value, choices))
