"""Error-message helpers: name the field, the value, what is allowed, and a likely fix. Every "did you mean" of
sagelaunch comes from `did_you_mean` (the only user of difflib)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError, SagelaunchTypeError

DID_YOU_MEAN = " (did you mean {}?)"


def closest(value: object, choices: Iterable[str], n: int = 1, cutoff: float = 0.6) -> list[str]:
    """The (at most n) choices closest to `value`, best first; [] when nothing is close."""
    choices = list(choices)
    text = str(value)
    matches = difflib.get_close_matches(text, choices, n=n, cutoff=cutoff)
    if not matches:
        # a prefix such as ml.p4d.24xl → ml.p4d.24xlarge is a near miss difflib may rank low
        prefixed = [c for c in choices if c.startswith(text) or text.startswith(c)] if text else []
        matches = sorted(prefixed, key=lambda c: abs(len(c) - len(text)))[:n]
    return matches


def did_you_mean(value: object, choices: Iterable[str], cutoff: float = 0.6, *, n: int = 1,
                 form: str = DID_YOU_MEAN) -> str:
    """`form` with the closest choices (repr, comma-separated) in place of {}, or '' when nothing is close:
    ' (did you mean X?)' unless the message's sentence needs another form."""
    matches = closest(value, choices, n=n, cutoff=cutoff)
    return form.format(", ".join(repr(m) for m in matches)) if matches else ""


def fix_from_hint(hint: str, otherwise: str) -> str:
    """The fix an error carries: its did_you_mean() hint without the brackets, or `otherwise` when nothing was close."""
    return hint.strip(" ()") or otherwise


def allowed_list(choices: Iterable[object], limit: int = 12) -> str:
    items = [str(c) for c in choices]
    shown = ", ".join(items[:limit])
    return shown + (f", … ({len(items)} in all)" if len(items) > limit else "")


def invalid(field: str, value: object, allowed: Iterable[object] | str, fix: str = "") -> SagelaunchError:
    """The error that says field, value, allowed values and a fix (a ValueError)."""
    if not isinstance(allowed, str):
        allowed = list(allowed)
    allowed_text = allowed if isinstance(allowed, str) else allowed_list(allowed)  # the message shows a dozen
    everything = allowed if isinstance(allowed, str) else ", ".join(str(c) for c in allowed)
    parts: dict[str, Any] = {"field": field, "value": value, "allowed": everything, "fix": fix.strip(" ()")}
    if fix.startswith(" ("):  # a "did you mean" goes right after the value
        return SagelaunchError(f"{field}={value!r} is not supported{fix}; allowed: {allowed_text}", **parts)
    return SagelaunchError(f"{field}={value!r} is not supported; allowed: {allowed_text}" + (f"; {fix}" if fix else ""),
                           **parts)


def choice_error(field: str, value: object, choices: Iterable[str]) -> SagelaunchError:
    choices = list(choices)
    return invalid(field, value, choices, did_you_mean(value, choices))


def unexpected_arguments(owner: str, unknown: Mapping[str, object], choices: Iterable[str]) -> SagelaunchTypeError:
    """Python's TypeError for keyword arguments `owner` does not take, each with its "did you mean"; its parts are
    the first one's."""
    choices = list(choices)
    first = next(iter(unknown))
    return SagelaunchTypeError(
        "; ".join(f"{owner} got an unexpected argument {k!r}{did_you_mean(k, choices)}" for k in unknown),
        field=first, value=unknown[first], allowed=", ".join(choices),
        fix=fix_from_hint(did_you_mean(first, choices), f"drop {first}"))
