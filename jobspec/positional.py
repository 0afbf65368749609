"""SageMaker SDK v2's positional arguments: one binding rule for every class that takes them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchTypeError


def bind_positional(owner: str, names: Sequence[str], args: tuple, kwargs: dict[str, Any]) -> dict[str, Any]:
    """kwargs with `args` bound to `names` in v2's order; too many, or one given twice, is a TypeError."""
    if len(args) > len(names):
        raise SagelaunchTypeError(f"{owner} takes at most {len(names)} positional arguments ({', '.join(names)}); "
                                  "pass the others by name", field=owner, value=args, allowed=", ".join(names),
                                  fix="pass the others by name")
    for name, value in zip(names, args):
        if name in kwargs:
            raise SagelaunchTypeError(f"{owner} got {name!r} both by position and by name", field=name, value=value,
                                      allowed="one of the two", fix=f"give {name} once")
        kwargs[name] = value
    return kwargs
