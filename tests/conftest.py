"""Shared fixtures live in tests/fixtures/, one module per part of the system.

`-m "not slow"` is the edit-test loop: every test that starts training processes, torchrun jobs, a browser
or model training is marked slow — explicitly in its module, or here when it uses a fixture that does.
"""

import contextlib
import os
import shutil
import signal
import tempfile

import pytest

pytest_plugins = [
    "tests.fixtures.aws",  # one moto server for the whole session
    "tests.fixtures.sagemaker_fakes",  # moto's training-job gaps closed, requests recorded, fault proxy
    "tests.fixtures.endpoint_fakes",  # moto's endpoint gaps closed (Graviton configs, InvokeEndpoint)
    "tests.fixtures.sentiment",  # one tiny trained RoBERTa for the whole session
    "tests.fixtures.browser",  # headless Chromium through Playwright
    "tests.fixtures.sdk_v2",  # the real SageMaker SDK v2, in its own venv, as the oracle of what v2 sends
]

# fixtures that train a model, launch torchrun or drive Chromium: a test using one is slow
SLOW_FIXTURES = {
    "sentiment_model", "sentiment_archive",  # trains the session's tiny RoBERTa
    "_launches", "world2", "world4",  # tests/modelparallel: torchrun launches
    "profiled_jobs",  # tests/profiler: profiled local jobs
    "runs",  # tests/profiler/test_torch_capture.py: Trainer runs under torch.profiler
}
BROWSER_FIXTURES = {"page", "browser_context_factory"}


# The suite never touches the running user's job registry (~/.sagelaunch) or caches (~/.cache): both point into one
# folder of this run, set when this first conftest is imported — before the other conftests, whose module-level code
# may already read profiles — so every test and every process tests start inherit them; removed at the end. Tests that
# need a registry of their own still set SAGELAUNCH_HOME themselves.
_RUN_FOLDER = tempfile.mkdtemp(prefix="sagelaunch-tests-")
RUN_ENV = {"SAGELAUNCH_HOME": os.path.join(_RUN_FOLDER, "home"), "XDG_CACHE_HOME": os.path.join(_RUN_FOLDER, "cache")}
os.environ.update(RUN_ENV)


# ... and a run that writes there anyway fails at its end, naming the folder (a test that builds a bare environment
# for a process must pass RUN_ENV on: tests/profiler/conftest.py's BARE_ENV does)
_USER_FOLDERS = (os.path.expanduser("~/.sagelaunch"), os.path.expanduser("~/.cache/sagelaunch"))


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


def pytest_sessionfinish(session, exitstatus):
    touched = [f for f, seen in _user_folders_state().items() if seen != _USER_FOLDERS_BEFORE[f]]
    if touched:
        session.config.get_terminal_writer().line(
            f"the run wrote into the user's own folders {touched}: a test started a process without RUN_ENV", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config):
    shutil.rmtree(_RUN_FOLDER, ignore_errors=True)


def pytest_collection_modifyitems(items):
    for item in items:
        used = set(getattr(item, "fixturenames", ()))
        if used & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        if used & (SLOW_FIXTURES | BROWSER_FIXTURES) and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


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
