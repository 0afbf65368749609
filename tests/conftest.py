"""Shared fixtures live in tests/fixtures/, one module per part of the system; tests/tiers.py sorts the tests into
tiers by cost (`-m unit`: no process, under a minute; `-m integration`; `-m slow`: training, jobs, a browser).
"""

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import tempfile

import pytest

from tests.tiers import mark_tiers

pytest_plugins = [
    "tests.fixtures.aws",  # one moto server for the whole session
    "tests.fixtures.sagemaker_fakes",  # moto's training-job gaps closed, requests recorded, fault proxy
    "tests.fixtures.endpoint_fakes",  # moto's endpoint gaps closed (Graviton configs, InvokeEndpoint)
    "tests.fixtures.sentiment",  # one tiny trained RoBERTa for the whole session
    "tests.fixtures.browser",  # headless Chromium through Playwright
    "tests.fixtures.sdk_v2",  # the real SageMaker SDK v2, in its own venv, as the oracle of what v2 sends
    "tests.fixtures.process_guard",  # the unit tier starts no process
    "tests.fixtures.cost_report",  # --cost-report: wall and CPU seconds per test
]

# The suite never touches the running user's home: the test process and every process it starts get a HOME, XDG
# folders, a job registry (SAGELAUNCH_HOME) and caches of this run's own, set when this first conftest is imported —
# before the other conftests, whose module-level code may already read profiles — and removed at the end. Tests that
# need a registry of their own still set SAGELAUNCH_HOME themselves.
_RUN_FOLDER = tempfile.mkdtemp(prefix="sagelaunch-tests-")
_RUN_HOME = os.path.join(_RUN_FOLDER, "user-home")
RUN_ENV = {
    "HOME": _RUN_HOME,
    "XDG_CONFIG_HOME": os.path.join(_RUN_HOME, ".config"),
    "XDG_DATA_HOME": os.path.join(_RUN_HOME, ".local", "share"),
    "XDG_STATE_HOME": os.path.join(_RUN_HOME, ".local", "state"),
    "SAGELAUNCH_HOME": os.path.join(_RUN_FOLDER, "home"),
    "XDG_CACHE_HOME": os.path.join(_RUN_FOLDER, "cache"),
}
for _folder in RUN_ENV.values():
    os.makedirs(_folder, exist_ok=True)
os.environ.update(RUN_ENV)


# ... and a run that writes into that home's sagelaunch folders anyway fails at its end, naming the folder: a process
# was started without SAGELAUNCH_HOME or XDG_CACHE_HOME (a test that builds a bare environment for a process must pass
# RUN_ENV on: tests/profiler/conftest.py's BARE_ENV does). Only the run's own home is watched, so other processes on
# the machine using sagelaunch in the real home at the same time cannot fail the run; a process this process starts
# with an environment that has no HOME (it would fall back to the real home) fails the run instead.
_USER_FOLDERS = (os.path.join(_RUN_HOME, ".sagelaunch"), os.path.join(_RUN_HOME, ".cache", "sagelaunch"))
_STARTED_WITHOUT_HOME: list[str] = []


def _user_folders_state() -> dict[str, tuple[int, int]]:
    """Per folder: how many entries it holds and the newest change among them (0, 0 when absent)."""
    state = {}
    for folder in _USER_FOLDERS:
        count, newest = 0, 0
        for root, dirs, files in os.walk(folder):
            for name in (*dirs, *files):
                count += 1
                with contextlib.suppress(OSError):
                    newest = max(newest, os.lstat(os.path.join(root, name)).st_mtime_ns)
        state[folder] = (count, newest)
    return state


_USER_FOLDERS_BEFORE = _user_folders_state()


def _noting_env_without_home(popen_init):
    @functools.wraps(popen_init)
    def init(self, args, *rest, **kwargs):
        env = kwargs.get("env", rest[9] if len(rest) > 9 else None)  # env: Popen's 10th parameter after args
        if env is not None and "HOME" not in env:
            _STARTED_WITHOUT_HOME.append(str(args)[:200])
        popen_init(self, args, *rest, **kwargs)
    return init


subprocess.Popen.__init__ = _noting_env_without_home(subprocess.Popen.__init__)


def pytest_sessionfinish(session, exitstatus):
    touched = [f for f, seen in _user_folders_state().items() if seen != _USER_FOLDERS_BEFORE[f]]
    writer = session.config.get_terminal_writer()
    if touched:
        writer.line(f"the run wrote into the home's own folders {touched}: a test started a process without RUN_ENV",
                    red=True)
    if _STARTED_WITHOUT_HOME:
        writer.line("processes were started with an environment without HOME (they would reach the real home; "
                    f"pass RUN_ENV on): {_STARTED_WITHOUT_HOME[:5]}", red=True)
    if touched or _STARTED_WITHOUT_HOME:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config):
    shutil.rmtree(_RUN_FOLDER, ignore_errors=True)


def pytest_collection_modifyitems(items):
    mark_tiers(items)


@pytest.fixture
def terminal_ctrl_c():
    """SIGINT raises KeyboardInterrupt in this process, as in a user's terminal, for the test's duration.

    A test run started in the background by a script (`cmd &` without job control, nohup, some CI runners)
    inherits SIGINT *ignored*; Python then installs no handler, a delivered Ctrl-C does nothing and a test
    that waits for it to stop a wait() polls until its timeout.
    """
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved)
