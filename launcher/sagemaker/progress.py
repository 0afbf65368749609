"""An upload's progress on the status line, and a printed warning when the endpoint stops answering.

boto3 reports bytes as they are handed to the socket; a frozen endpoint then goes quiet until the read
timeout ends the attempt. Without this the user sees nothing for attempts × read timeout (minutes).
"""

from __future__ import annotations

import threading
import time

from sagelaunch.launcher.common.aws.limits import MAX_ATTEMPTS_ENV, READ_TIMEOUT_ENV, max_attempts, read_timeout

TICK_S = 0.25


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n:,} bytes"


class UploadWatch:
    """Context manager; pass the instance as boto3's `Callback`."""

    def __init__(self, console, status, label: str, total: int):
        self.console, self.status, self.label, self.total = console, status, label, total
        self.sent, self.last = 0, time.monotonic()
        self.timeout, self.attempts = read_timeout(), max_attempts()
        self.notice_after = min(10.0, self.timeout / 2)  # well before the attempt's read timeout ends it
        self.noticed = False
        self._lock, self._done = threading.Lock(), threading.Event()

    def __call__(self, amount: int) -> None:  # boto3's Callback; negative when a retry rewinds the file
        with self._lock:
            self.sent = max(0, self.sent + amount)
            self.last, self.noticed = time.monotonic(), False
        self.status.update(f"{self.label}: {_mb(self.sent)} of {_mb(self.total)}")

    def _tick(self) -> None:
        while not self._done.wait(TICK_S):
            with self._lock:
                quiet = time.monotonic() - self.last
                warn = quiet >= self.notice_after and not self.noticed
                self.noticed |= warn
            if quiet >= self.notice_after:
                self.status.update(f"{self.label}: {_mb(self.sent)} of {_mb(self.total)}, "
                                   f"no answer for {quiet:.0f} s")
            if warn:
                self.console.print(
                    f"warning: no answer from the endpoint for {quiet:.0f} s during {self.label} ({_mb(self.sent)} "
                    f"of {_mb(self.total)} sent); each attempt waits up to {self.timeout:g} s "
                    f"({READ_TIMEOUT_ENV}), {self.attempts} attempts ({MAX_ATTEMPTS_ENV})", markup=False)

    def __enter__(self) -> "UploadWatch":
        self._thread = threading.Thread(target=self._tick, name="upload-watch", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *_) -> None:
        self._done.set()
        self._thread.join()
