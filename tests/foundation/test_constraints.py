"""constraints/project.txt is the set of versions the suite passes with: the README's commands install through it.

Every requirement pyproject names (each extra included) must be pinned there with a version its own range accepts,
so that adding a dependency without pinning it, or pinning outside its range, fails here rather than on the day an
upstream release changes what a fresh install gets.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
INSTALLED_SEPARATELY = {"torch"}  # the CPU build, pinned by scripts/ensure_venv.sh before anything else


def _pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints" / "project.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"constraints/project.txt: {line!r} is not an exact pin (name==version)"
            pins[canonicalize_name(name)] = version
    return pins


def _requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    named = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    return [req for req in map(Requirement, named) if canonicalize_name(req.name) != "sagelaunch"]


def test_every_requirement_is_pinned_within_its_range():
    pins = _pins()
    for req in _requirements():
        name = canonicalize_name(req.name)
        if name in INSTALLED_SEPARATELY:
            assert name not in pins, f"{name} is installed by scripts/ensure_venv.sh; constraints/project.txt must not pin it"
            continue
        assert name in pins, f"{req} is not pinned in constraints/project.txt; add the version the suite passes with"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"constraints/project.txt pins {name}=={pins[name]}, outside pyproject's {req}"


def test_the_readme_commands_install_through_the_constraints():
    assert "-c constraints/project.txt" in (REPO / "scripts" / "ensure_venv.sh").read_text()
    run_tests = (REPO / "scripts" / "run_tests.sh").read_text()
    assert "-c constraints/sdk-v2.txt" in run_tests and "-c constraints/sdk-v3.txt" in run_tests
