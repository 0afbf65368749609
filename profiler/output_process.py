"""A helper process that writes the profile, so that the training process does not pay for it.

Writing a window means importing pyarrow and our trace reader (~0.15–0.25 s of CPU, once) and parsing Kineto's
export (memory the size of the window). In a helper process this happens beside training, on another core: the
training process only hands over annotation spans and the path of torch's Chrome export. The helper starts with
start_profiling() and imports what it needs at once, so the first window finds it ready.

Calls are pickled over the helper's stdin/stdout, one at a time (a lock: the window writer and the system monitor
share it). The helper ignores Ctrl-C (the training process decides when to stop) and ends when asked or when its stdin
closes, so it never outlives the training process. If it cannot start or dies, the calls run in this process instead:
nothing is lost, only the cost comes back. ``SAGELAUNCH_PROFILER_OUTPUT_PROCESS=0`` writes in this process from
the start (one process less, ~75 MB less memory, the writing's CPU on this process's cores).
"""

from __future__ import annotations

import logging
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from sagelaunch.jobspec.errors import SagelaunchRuntimeError
from sagelaunch.jobspec.install import INSTALL_ROOT

log = logging.getLogger("sagelaunch.profiler")
_ROOT = str(INSTALL_ROOT)
PROCESS_ENV = "SAGELAUNCH_PROFILER_OUTPUT_PROCESS"  # 0: write in the training process (no helper)
EXIT_CALL = "exit"  # the call that ends the helper (profiler/output_serve.py)
# the helper ignores Ctrl-C from its first statement (the training process decides when to stop)
_SERVE = (f"import signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); sys.path.insert(0, {_ROOT!r}); "
          "from sagelaunch.profiler.output_serve import serve; serve()")


class OutputError(SagelaunchRuntimeError):
    """A write failed in the helper process (its traceback is the message)."""


class ProfileOutput:
    """Runs window_output's calls in the helper process, or in this process when there is none."""

    def __init__(self, use_process: bool | None = None) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self.exit_code: int | None = None  # the helper's, once it ended
        if use_process is None:
            use_process = os.environ.get(PROCESS_ENV, "1") != "0"
        if use_process and sys.executable:
            try:
                # no thread pools; the system allocator for Arrow: a window's write peaks ~12 MB lower than with
                # mimalloc (10k spans: +10 vs +22 MB) at no measurable cost for writes this small
                env = {"ARROW_DEFAULT_MEMORY_POOL": "system", **os.environ, "OPENBLAS_NUM_THREADS": "1",
                       "OMP_NUM_THREADS": "1"}
                self._proc = subprocess.Popen([sys.executable, "-c", _SERVE], stdin=subprocess.PIPE,
                                              stdout=subprocess.PIPE, env=env)
            except OSError as exc:
                log.info("profiler: no output process (%s); the profile is written in this process", exc)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def write_window(self, *args) -> Path | None:
        return self._call("write_window", args)

    def write_counter_rows(self, *args) -> Path:
        return self._call("write_counter_rows", args)

    def _call(self, name: str, args: tuple) -> Any:
        with self._lock:
            if self._proc is not None:
                stdin, stdout = _pipes(self._proc)
                try:
                    pickle.dump((name, args), stdin, protocol=pickle.HIGHEST_PROTOCOL)
                    stdin.flush()
                    ok, value = pickle.load(stdout)
                except (OSError, EOFError, pickle.UnpicklingError) as exc:
                    log.warning("profiler: the output process ended (%s, exit code %s); writing in this process",
                                exc, self._proc.poll())
                    self._end_process()
                else:
                    if not ok:
                        raise OutputError(value)
                    return value
            from sagelaunch.profiler.window_output import CALLS  # lazy: the writers (pyarrow) load in the training process only when no helper process writes

            return CALLS[name](*args)

    def close(self) -> None:
        """End the helper (it has answered every call, so nothing is pending)."""
        with self._lock:
            self._end_process()

    def _end_process(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        stdin, stdout = _pipes(proc)
        try:  # asked, not just stdin closed: a process forked from this one (a DataLoader worker) holds stdin too
            pickle.dump((EXIT_CALL, ()), stdin)
            stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        stdout.close()
        self.exit_code = proc.returncode


def _pipes(proc: subprocess.Popen[bytes]) -> tuple[IO[bytes], IO[bytes]]:
    """The helper's stdin and stdout (it is always started with both piped)."""
    if proc.stdin is None or proc.stdout is None:
        raise OutputError("the output process was started without its pipes")
    return proc.stdin, proc.stdout
