"""The sidecar's stop flag can be set by a signal at any point of the monitor's waits. threading.Event could not:
a SIGTERM arriving while Event.wait() held the event's lock ran Event.set() in the same thread and deadlocked, so the
monitor ignored the job's end, was killed 10 s later and published nothing (seen in a fresh-clone run)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from tests.profiler.conftest import REPO

pytestmark = pytest.mark.integration  # starts a Python process

# a signal every millisecond while the main thread waits on the flag in 2 ms slices, for 3 s (thousands of chances
# to land inside the wait); the child is killed by the timeout if a handler blocks
STORM = textwrap.dedent("""\
    import signal, sys, time
    from sagelaunch.profiler.monitor import SignalFlag
    stop = SignalFlag()
    signal.signal(signal.SIGALRM, lambda *_: stop.set())
    signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
    end, waits = time.monotonic() + 3, 0
    while time.monotonic() < end:
        stop.wait(0.002)
        waits += 1
    signal.setitimer(signal.ITIMER_REAL, 0)
    print("waits", waits, "set", stop.is_set())
    """)


def test_a_signal_storm_never_blocks_the_monitors_stop_flag():
    out = subprocess.run([sys.executable, "-c", STORM], env={**os.environ, "PYTHONPATH": str(REPO)},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "True" and int(out.stdout.split()[1]) > 100
