"""Shared fixtures live in tests/fixtures/, one module per part of the system.

`-m "not slow"` is the edit-test loop: every test that starts training processes, torchrun jobs, a browser
or model training is marked slow — explicitly in its module, or here when it uses a fixture that does.
"""

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
# folder of this run, made before any test or process starts (the processes tests start inherit them) and removed
# at the end. Tests that need a registry of their own still set SAGELAUNCH_HOME themselves.
_RUN_FOLDER = tempfile.mkdtemp(prefix="sagelaunch-tests-")
RUN_ENV = {"SAGELAUNCH_HOME": os.path.join(_RUN_FOLDER, "home"), "XDG_CACHE_HOME": os.path.join(_RUN_FOLDER, "cache")}


def pytest_configure(config):
    os.environ.update(RUN_ENV)


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
