"""Sidecar: `python -m sagelaunch.profiler.monitor --config <profilerconfig.json> --out <dir> --host algo-N`.

Samples CPU per core (and GPUs through NVML) from job start at ProfilingIntervalInMilliseconds until SIGTERM/SIGINT,
then writes its last samples. The local backend starts one per host; SageMaker jobs get the same data from the
in-process monitor of rank 0.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path


class SignalFlag:
    """The sidecar's stop flag, set by its signal handlers. Not a threading.Event: Event.set() takes the event's
    lock, which the main thread holds for a moment inside every Event.wait(); a signal arriving then ran set() in
    the same thread and deadlocked (the monitor ignored SIGTERM, was killed 10 s later and wrote nothing)."""

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True  # one store: safe at any point of the interrupted code

    def is_set(self) -> bool:
        return self._set

    def wait(self, timeout: float) -> bool:
        """True once set; False after `timeout` seconds (checked every 20 ms at most)."""
        deadline = time.monotonic() + timeout
        while not self._set:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, 0.02))
        return True


def main(argv: list[str] | None = None) -> int:
    # The handlers come before the imports: a short job can end while they still run (seconds on a busy machine), and
    # the default SIGTERM would end the monitor before it writes the one sample every run gets. The local supervisor
    # starts this process with both signals blocked, so one sent even earlier waits for the handlers.
    stop = SignalFlag()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    ap = argparse.ArgumentParser(prog="python -m sagelaunch.profiler.monitor", description=__doc__.splitlines()[0])
    ap.add_argument("--config", type=Path, help="profilerconfig.json (default: the job's)")
    ap.add_argument("--out", type=Path, required=True, help="profiler output folder (files go to <out>/<host>/)")
    ap.add_argument("--host", default=None, help="host name, e.g. algo-1")
    ap.add_argument("--interval-ms", type=int, default=None, help="override ProfilingIntervalInMilliseconds")
    args = ap.parse_args(argv)
    from sagelaunch.profiler.system_monitor import run_sidecar  # lazy: after the signal handlers, so a SIGTERM during the imports is not lost

    return run_sidecar(args.config, args.out, args.host, args.interval_ms, stop)


if __name__ == "__main__":
    sys.exit(main())
