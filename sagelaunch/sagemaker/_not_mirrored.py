"""v2 names sagelaunch does not mirror: refused by name (what is mirrored, and the way out), never a bare
ModuleNotFoundError or AttributeError from deep inside a notebook's imports."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError

PACKAGE = "sagelaunch.sagemaker"
_HERE = Path(__file__).parent


def mirrored_modules() -> list[str]:
    return sorted(p.stem if p.suffix == ".py" else p.name for p in _HERE.iterdir()
                  if not p.name.startswith("_") and (p.suffix == ".py" or (p / "__init__.py").is_file()))


def not_mirrored(what: str) -> SagelaunchError:
    v2_name = what.replace(PACKAGE, "sagemaker", 1)
    allowed = ", ".join(f"sagemaker.{m}" for m in mirrored_modules())
    fix = (f"use the SageMaker SDK v2 itself for {v2_name} (sagelaunch mirrors {allowed}), or the nearest "
           "sagelaunch class (README: From SageMaker SDK v2)")
    return SagelaunchError(f"{v2_name} is not implemented by sagelaunch; {fix}", field=v2_name, value=what,
                           allowed=allowed, fix=fix)


def refusing_getattr(module: str) -> Any:
    """A mirrored module's `__getattr__`: a v2 name it does not hold is refused by name (`from sagemaker.X import Y`)."""

    def __getattr__(name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        raise not_mirrored(f"{module}.{name}")

    return __getattr__


class NotMirroredFinder:
    """An import hook for `sagelaunch.sagemaker.<module>` that does not exist: the named refusal instead."""

    @classmethod
    def find_spec(cls, fullname: str, path: Any = None, target: Any = None) -> None:
        if not fullname.startswith(PACKAGE + ".") or fullname.rsplit(".", 1)[-1].startswith("_"):
            return None
        parts = fullname[len(PACKAGE) + 1:].split(".")
        folder = _HERE.joinpath(*parts[:-1])
        if (folder / f"{parts[-1]}.py").is_file() or (folder / parts[-1] / "__init__.py").is_file():
            return None
        raise not_mirrored(fullname)


def install() -> None:
    if not any(finder is NotMirroredFinder for finder in sys.meta_path):
        sys.meta_path.insert(0, NotMirroredFinder)
