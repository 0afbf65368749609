"""The suite's own rules: the unit tier's guard refuses every way of starting a process, and what the suite starts
lives in the run's own home, not the user's."""

from __future__ import annotations

import multiprocessing
import os
import pwd
import subprocess
import sys

import pytest

from tests.conftest import RUN_ENV
from tests.fixtures.process_guard import ProcessStarted, _patched


def _refuse(call: str) -> None:
    raise ProcessStarted(call)


@pytest.mark.parametrize("start", [
    lambda: subprocess.run([sys.executable, "-c", "pass"]),
    lambda: os.popen("true").close(),
    lambda: os.system("true"),
    lambda: os.fork(),
    lambda: os.posix_spawn(sys.executable, [sys.executable, "-c", "pass"], dict(os.environ)),
    lambda: multiprocessing.get_context("spawn").Process(target=print).start(),
], ids=["subprocess.run", "os.popen", "os.system", "os.fork", "os.posix_spawn", "multiprocessing"])
def test_the_guard_refuses_each_way_of_starting_a_process_naming_this_file(start):
    before = subprocess.Popen._execute_child, os.fork, multiprocessing.process.BaseProcess.start
    with _patched(_refuse), pytest.raises(ProcessStarted, match=r"test_suite_tiers\.py:\d+"):
        start()
    assert (subprocess.Popen._execute_child, os.fork, multiprocessing.process.BaseProcess.start) == before


def test_the_guard_is_on_in_the_unit_tier(request):
    assert request.node.get_closest_marker("unit") is not None
    with pytest.raises(ProcessStarted, match="unit tier starts none.*integration"):
        subprocess.run(["true"])


@pytest.mark.integration
def test_a_process_the_suite_starts_has_the_runs_home_not_the_users():
    seen = subprocess.run([sys.executable, "-c", "import os; print(os.path.expanduser('~'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert seen == RUN_ENV["HOME"] != pwd.getpwuid(os.getuid()).pw_dir
    assert os.environ["SAGELAUNCH_HOME"] == RUN_ENV["SAGELAUNCH_HOME"]
