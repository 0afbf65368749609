"""Run SageMaker SDK v2 code — or the same code with its imports swapped for ours — and print the
AWS calls it made: the oracle of the v2 parity tests (tests/parity_v2).

    .venv-sagemaker-v2/bin/python scripts/sdk_v2_oracle.py          < cases.json   # the real SDK v2
    .venv/bin/python              scripts/sdk_v2_oracle.py --ours   < cases.json   # sagelaunch
    ... scripts/sdk_v2_oracle.py [--ours] --serve   # many batches, each in a fork of one warm interpreter (serve())

Each case is {"id": str, "code": str} (or "cells": a notebook's code cells, run in order in one namespace, each
cell's outcome reported — a failing cell does not stop the next, as in a notebook run cell by cell): Python source
written the v2 way (`from sagemaker.pytorch import
PyTorch` …). It runs in a fresh namespace holding ROLE (an execution role ARN) and whatever the case's
"names" give; it may set RESULT to anything JSON can hold. For each case the output holds every botocore
call it made (service, operation, params), RESULT and, when it raised, the error. A case's "v2_clock_ahead_s" starts
v2's clock that far ahead of the wall: both sides share one server, and a name v2 and we generate to the minute (a
tuning job's) would otherwise be taken by whichever side came first. AWS is reached through
the standard chain (AWS_ENDPOINT_URL → the tests' moto server). Runs with only the standard library and
botocore, so the same file serves both interpreters.
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from typing import Any

# The one swap rule: v2's module tree is mirrored under `sagelaunch.sagemaker`, so every import line maps by
# one textual rule. Its three forms, as README's table shows them (tests/parity_v2/test_swap_rule.py: equal):
SWAP_RULE: tuple[tuple[str, str], ...] = (
    ("from sagemaker.X import …", "from sagelaunch.sagemaker.X import …"),
    ("from sagemaker import …", "from sagelaunch.sagemaker import …"),
    ("import sagemaker  (or import sagemaker.X)", "import sagelaunch.sagemaker as sagemaker"),
    ("import sagemaker.X as Y", "import sagelaunch.sagemaker.X as Y"),
)
_SWAPS = (
    (re.compile(r"^(\s*)from\s+sagemaker((?:\.\w+)*)\s+import\s", re.MULTILINE), r"\1from sagelaunch.sagemaker\2 import "),
    (re.compile(r"^(\s*)import\s+sagemaker((?:\.\w+)*)\s+as\s+(\w+)", re.MULTILINE), r"\1import sagelaunch.sagemaker\2 as \3"),
    (re.compile(r"^(\s*)import\s+sagemaker(?:\.\w+)*[ \t]*$", re.MULTILINE), r"\1import sagelaunch.sagemaker as sagemaker"),
)


def swap_imports(code: str) -> str:
    """v2 code → sagelaunch code by the one rule (SWAP_RULE): `sagemaker` → `sagelaunch.sagemaker` in imports."""
    for pattern, replacement in _SWAPS:
        code = pattern.sub(replacement, code)
    return code


class CallRecorder:
    """Records every botocore API call (service, operation, params) made while installed."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self._original = None

    def __enter__(self) -> "CallRecorder":
        from botocore.client import BaseClient

        original = self._original = BaseClient._make_api_call
        calls = self.calls

        def recording(client: Any, operation_name: str, api_params: dict) -> Any:
            calls.append({"service": client.meta.service_model.service_name, "operation": operation_name,
                          "params": _plain(api_params)})
            return original(client, operation_name, api_params)

        BaseClient._make_api_call = recording
        return self

    def __exit__(self, *exc: Any) -> None:
        from botocore.client import BaseClient

        BaseClient._make_api_call = self._original


def _plain(value: Any) -> Any:
    """JSON-able copy of request params (upload bodies and other objects become a short marker)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    return f"<{type(value).__name__}>"


def prepare_sdk_v2() -> None:
    """Keep the real SDK v2 on this machine's endpoints: no telemetry, STS through AWS_ENDPOINT_URL.

    v2 names STS's public regional endpoint explicitly (which beats AWS_ENDPOINT_URL) and sends
    telemetry to a public S3 URL; neither is part of what it asks SageMaker for. (Opting out through a
    SageMaker config file instead makes v2 validate that file against its JSON schema on every setting it
    looks up: 90% of its time.)
    """
    import os

    import sagemaker.session
    import sagemaker.telemetry.telemetry_logging as telemetry

    telemetry._send_telemetry_request = lambda *args, **kwargs: None
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        sagemaker.session.sts_regional_endpoint = lambda region: endpoint
    run_on_a_virtual_clock()


def read_botocore_files_once() -> None:
    """Every botocore session of this process parses each of botocore's JSON files (service models, endpoints) once.
    Each case makes sessions of its own, and parsing the same megabytes again was a fifth of the oracle's time; the
    files do not change within a run, and later sessions get what the first parsed, as a session's later clients do
    (botocore's own per-session cache), so the calls made are the same."""
    import botocore.loaders

    parse = botocore.loaders.JSONFileLoader.load_file
    parsed: dict[str, Any] = {}

    def load_file(loader: Any, file_path: str) -> Any:
        if file_path not in parsed:
            parsed[file_path] = parse(loader, file_path)
        return parsed[file_path]

    botocore.loaders.JSONFileLoader.load_file = load_file


# how far v2's clock runs ahead of the wall (its sleeps, plus a case's "v2_clock_ahead_s")
_AHEAD = [0.0]


def run_on_a_virtual_clock() -> None:
    """v2's waits sleep (10 s per training-job poll, 30 s per endpoint poll) though the test service moves a job
    one step per describe: each sleep here advances the clock v2 reads instead of the wall, so v2 makes the very
    same calls in the same order, without the wall time (v2's side only: it runs no process of its own). Its calendar
    (`time.localtime`/`gmtime`/`strftime` without a time) reads the same clock."""
    import time

    wall_time, wall_monotonic = time.time, time.monotonic
    wall_localtime, wall_gmtime, wall_strftime = time.localtime, time.gmtime, time.strftime

    def sleep(seconds: Any) -> None:  # time.sleep's own type (float or an index)
        _AHEAD[0] += max(0.0, float(seconds))

    time.sleep = sleep
    time.time = lambda: wall_time() + _AHEAD[0]
    time.monotonic = lambda: wall_monotonic() + _AHEAD[0]
    time.localtime = lambda secs=None: wall_localtime(time.time() if secs is None else secs)
    time.gmtime = lambda secs=None: wall_gmtime(time.time() if secs is None else secs)
    time.strftime = lambda fmt, t=None: wall_strftime(fmt, time.localtime() if t is None else t)


def run_cases(cases: list[dict], ours: bool) -> list[dict]:
    import contextlib

    out = []
    for case in cases:
        # a case is one piece of code, or a notebook's code cells run in order in one namespace
        cells = case.get("cells", [case.get("code", "")])
        namespace: dict[str, Any] = {"__name__": "__case__", **case.get("names", {})}
        if not ours:  # names v2 makes to the minute (a tuning job's) must not meet ours on the shared server
            _AHEAD[0] += float(case.get("v2_clock_ahead_s", 0))
        error, outcomes = None, []
        with CallRecorder() as recorder, contextlib.redirect_stdout(sys.stderr):  # stdout carries the JSON
            for index, cell in enumerate(cells):
                code = swap_imports(cell) if ours else cell
                try:
                    exec(compile(code, f"<case {case['id']} cell {index}>", "exec"), namespace)
                    outcomes.append("ok")
                except BaseException as err:  # report, do not stop: the test names the failing case
                    outcomes.append(f"{type(err).__name__}: {err}")
                    if error is None:
                        error = outcomes[-1] + ("\n" + traceback.format_exc() if case.get("traceback") else "")
                    if "cells" not in case:
                        break
        out.append({"id": case["id"], "calls": recorder.calls, "error": error, "cells": outcomes,
                    "result": _plain(namespace.get("RESULT"))})
    return out


# the modules the cases import (v2's names; ours by the swap rule), imported once by a serving oracle before it forks
PRELOAD = ("sagemaker", "sagemaker.pytorch", "sagemaker.tensorflow", "sagemaker.huggingface", "sagemaker.estimator",
           "sagemaker.debugger", "sagemaker.inputs", "sagemaker.tuner", "sagemaker.analytics", "sagemaker.model",
           "sagemaker.transformer", "sagemaker.serializers", "sagemaker.deserializers", "sagemaker.session",
           "sagemaker.instance_group", "sagemaker.s3")
# the AWS services the cases reach: their models are parsed by a serving oracle before it forks
PRELOAD_SERVICES = ("sagemaker", "s3", "sts", "logs", "iam", "sagemaker-runtime")


def _quiet() -> None:
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)


def main() -> None:
    _quiet()
    ours = "--ours" in sys.argv[1:]
    if "--serve" in sys.argv[1:]:
        serve(ours)
        return
    cases = json.load(sys.stdin)
    read_botocore_files_once()
    if not ours:
        prepare_sdk_v2()
    import os

    # stdout carries the JSON: what subprocesses of a case print (git clone's messages) goes to stderr
    sys.stdout.flush()
    json_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    results = run_cases(cases, ours)
    sys.stdout.flush()
    json.dump(results, json_out)
    json_out.flush()


def serve(ours: bool) -> None:
    """Answer batches of cases, one request per stdin line, each batch in a fork of this process: every batch starts
    from the state a fresh interpreter has after its imports, without paying for them again (v2's take seconds).

    A request is {"cases", "env", "cwd", "out", "log"}: the batch runs with that environment and working folder, its
    results go to the file "out" (what the cases print to "log"), and the reply line is the fork's exit status."""
    import importlib
    import os

    replies = os.fdopen(os.dup(1), "w")  # stdout carries the replies: what the imports print goes to stderr
    os.dup2(2, 1)
    read_botocore_files_once()
    if not ours:
        prepare_sdk_v2()
    for name in PRELOAD:
        importlib.import_module(swap_imports(f"import {name} as module").split()[1] if ours else name)
    import botocore.session

    for service in PRELOAD_SERVICES:  # their files parsed here, once for every batch
        botocore.session.get_session().create_client(service, region_name="us-west-2")
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:  # the batch: never returns to this loop
            status = 1
            try:
                replies.close()
                _run_request(request, ours)
                status = 0
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(status)
        _, wait_status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(wait_status), file=replies, flush=True)


def _run_request(request: dict, ours: bool) -> None:
    import os

    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(log, 1)  # stdout and stderr: what the cases and their subprocesses print
    os.dup2(log, 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)  # the requests' pipe stays the server's
    sys.stdin = open(os.devnull)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    results = run_cases(request["cases"], ours)
    with open(request["out"], "w") as out:
        json.dump(results, out)


if __name__ == "__main__":
    main()
