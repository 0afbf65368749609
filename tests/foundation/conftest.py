"""mypy, the slowest check of test_lint.py (~15 s of CPU on a fresh clone, whose cache is empty), starts as soon as
collection shows the run will ask for it: it runs in the background beside the tests before it, and its test reads
its result. A run that does not select that test starts nothing."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

import pytest

ROOT = Path(__file__).resolve().parents[2]
MYPY_TEST = "test_lint.py::test_mypy_finds_no_type_error_in_the_library"
MYPY_TIMEOUT_S = 300


class Background:
    """A tool run from the repository root with its output in a temporary file (no pipe to fill)."""

    def __init__(self, *args: str) -> None:
        self.args = args
        self.output: IO[str] = tempfile.TemporaryFile("w+")
        self.process = subprocess.Popen([sys.executable, "-m", *args], cwd=ROOT, stdout=self.output,
                                        stderr=subprocess.STDOUT, text=True)

    def result(self) -> tuple[int, str]:
        """(return code, what it printed), once it has ended."""
        code = self.process.wait(timeout=MYPY_TIMEOUT_S)
        self.output.seek(0)
        return code, self.output.read()

    def end(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.output.close()


_STARTED: dict[str, Background] = {}


def pytest_collection_finish(session: pytest.Session) -> None:
    if not session.config.option.collectonly and any(item.nodeid.endswith(MYPY_TEST) for item in session.items):
        _STARTED["mypy"] = Background("mypy")


def pytest_unconfigure(config: pytest.Config) -> None:
    for run in _STARTED.values():  # an interrupted run leaves no type checker running
        run.end()


@pytest.fixture
def mypy_result() -> tuple[int, str]:
    """mypy's (return code, output): the run started at collection's end, or one started now."""
    run = _STARTED.get("mypy") or _STARTED.setdefault("mypy", Background("mypy"))
    return run.result()
