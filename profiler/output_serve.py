"""The output process's side (profiler/output_process.py starts it): answer the training process's pickled calls
with window_output's writers until asked to end or until stdin closes. Its own module, so the training process,
which imports output_process, never imports the writers (pyarrow)."""

from __future__ import annotations

import os
import pickle
import sys
import traceback

from sagelaunch.profiler.output_process import EXIT_CALL
from sagelaunch.profiler.window_output import CALLS, warm_up


def serve() -> None:
    """The helper's loop: answer (name, args) calls from stdin until it closes. (SIGINT is ignored by the command
    that starts it, before any import.)"""
    requests = sys.stdin.buffer
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # a stray print must not corrupt the replies
    warm_up()
    while True:
        try:
            name, args = pickle.load(requests)
        except EOFError:  # the training process ended without asking
            name = EXIT_CALL
        if name == EXIT_CALL:  # every call has been answered and its file renamed into place: skip the teardown
            os._exit(0)
        try:
            reply = (True, CALLS[name](*args))
        except Exception:  # noqa: BLE001 — the training process logs it and stops profiling
            reply = (False, traceback.format_exc())
        pickle.dump(reply, replies, protocol=pickle.HIGHEST_PROTOCOL)
        replies.flush()
