"""The library passes its linter (ruff) and its type checker (mypy), as pyproject configures them.

Both run as subprocesses from the repository root, so `pytest` is the one command that also lints and type
checks; a failure prints their own report. mypy is incremental (its cache under .mypy_cache) and starts in the
background when collection ends (conftest.py `mypy_result`)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.foundation.test_architecture import PACKAGES

try:
    import tomllib
except ImportError:  # Python 3.10: mypy's own dependency
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def _installed(tool: str) -> None:
    try:
        __import__(tool)
    except ImportError:
        pytest.fail(f"{tool} is not installed; install the test extra: pip install -e '.[test]'")


def _run(tool: str, *args: str) -> None:
    _installed(tool)
    done = subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{tool} {' '.join(args)} failed:\n{done.stdout}{done.stderr}"


def test_ruff_finds_nothing_in_the_library():
    _run("ruff", "check", "--no-cache")


def test_mypy_finds_no_type_error_in_the_library(mypy_result):
    _installed("mypy")
    code, output = mypy_result
    assert code == 0, f"mypy failed:\n{output}"


def test_both_cover_every_library_package_and_no_other():
    """A new top-level package (added to the architecture test's table) is linted and type checked too."""
    tools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]
    assert tools["mypy"]["packages"] == ["sagelaunch"]  # every library folder is inside it (sagelaunch/<folder>)
    assert all((ROOT / "sagelaunch" / name / "__init__.py").is_file() for name in PACKAGES if name != "sagelaunch")
    assert sorted(pattern.split("/")[0] for pattern in tools["ruff"]["include"]) == sorted(PACKAGES)
