"""Run SageMaker SDK v2 code — or the same code with its imports swapped for ours — and print the
AWS calls it made: the oracle of the v2 parity tests (tests/parity_v2).

    .venv-sagemaker-v2/bin/python scripts/sdk_v2_oracle.py          < cases.json   # the real SDK v2
    .venv/bin/python              scripts/sdk_v2_oracle.py --ours   < cases.json   # sagelaunch

Each case is {"id": str, "code": str}: Python source written the v2 way (`from sagemaker.pytorch import
PyTorch` …). It runs in a fresh namespace holding ROLE (an execution role ARN) and whatever the case's
"names" give; it may set RESULT to anything JSON can hold. For each case the output holds every botocore
call it made (service, operation, params), RESULT and, when it raised, the error. AWS is reached through
the standard chain (AWS_ENDPOINT_URL → the tests' moto server). Runs with only the standard library and
botocore, so the same file serves both interpreters.
"""

from __future__ import annotations

import json
import re
import sys
import traceback
from typing import Any

# v2 import → ours: the one table the parity tests, the v2-style notebook and README's drop-in list share
IMPORT_SWAPS: tuple[tuple[str, str], ...] = (
    ("sagemaker.pytorch", "estimators"),
    ("sagemaker.tensorflow", "estimators"),
    ("sagemaker.inputs", "estimators"),
    ("sagemaker.estimator", "estimators"),
    ("sagemaker.model", "estimators"),
    ("sagemaker.serializers", "estimators.serializers"),
    ("sagemaker.deserializers", "estimators.serializers"),
    ("sagemaker.debugger", "profiler_config"),
    ("sagemaker.session", "estimators"),
    ("sagemaker.instance_group", "estimators"),
)
_FROM_IMPORT = re.compile(r"^(\s*)from\s+([\w.]+)\s+import\s", re.MULTILINE)


def swap_imports(code: str) -> str:
    """`from sagemaker.X import …` → `from <ours> import …` (one table: IMPORT_SWAPS)."""
    swaps = dict(IMPORT_SWAPS)

    def repl(m: re.Match) -> str:
        module = m.group(2)
        return f"{m.group(1)}from {swaps.get(module, module)} import "

    return _FROM_IMPORT.sub(repl, code)


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


def prepare_sdk_v2(config_dir: str) -> None:
    """Keep the real SDK v2 on this machine's endpoints: no telemetry, STS through AWS_ENDPOINT_URL.

    v2 names STS's public regional endpoint explicitly (which beats AWS_ENDPOINT_URL) and sends
    telemetry to a public S3 URL; neither is part of what it asks SageMaker for.
    """
    import os

    config = os.path.join(config_dir, "sagemaker-config.yaml")
    with open(config, "w") as f:
        f.write("SchemaVersion: '1.0'\nSageMaker:\n  PythonSDK:\n    Modules:\n      TelemetryOptOut: true\n")
    os.environ["SAGEMAKER_USER_CONFIG_OVERRIDE"] = config
    _validate_config_once()
    endpoint = os.environ.get("AWS_ENDPOINT_URL")
    if endpoint:
        import sagemaker.session

        sagemaker.session.sts_regional_endpoint = lambda region: endpoint


def _validate_config_once() -> None:
    """v2 checks its config against a JSON schema on every config lookup (~1 s each, dozens per job): check the
    one config we wrote once, so a grid of cases runs in seconds. What v2 sends does not depend on it."""
    import sagemaker.config.config
    import sagemaker.session
    import sagemaker.utils

    original, checked = sagemaker.utils.validate_sagemaker_config, set()

    def validate_once(config: dict = None) -> Any:
        key = json.dumps(config, sort_keys=True, default=str)
        if key not in checked:
            original(config)
            checked.add(key)

    sagemaker.config.config.validate_sagemaker_config = validate_once
    sagemaker.utils.validate_sagemaker_config = validate_once
    sagemaker.session.validate_sagemaker_config = validate_once


def run_cases(cases: list[dict], ours: bool) -> list[dict]:
    import contextlib

    out = []
    for case in cases:
        code = swap_imports(case["code"]) if ours else case["code"]
        namespace: dict[str, Any] = {"__name__": "__case__", **case.get("names", {})}
        error = None
        with CallRecorder() as recorder, contextlib.redirect_stdout(sys.stderr):  # stdout carries the JSON
            try:
                exec(compile(code, f"<case {case['id']}>", "exec"), namespace)
            except BaseException as err:  # report, do not stop: the test names the failing case
                error = f"{type(err).__name__}: {err}"
                if case.get("traceback"):
                    error += "\n" + traceback.format_exc()
        out.append({"id": case["id"], "calls": recorder.calls, "error": error,
                    "result": _plain(namespace.get("RESULT"))})
    return out


def main() -> None:
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.WARNING)
    ours = "--ours" in sys.argv[1:]
    cases = json.load(sys.stdin)
    if not ours:
        import tempfile

        prepare_sdk_v2(tempfile.mkdtemp(prefix="sdk-v2-oracle-"))
    import os

    # stdout carries the JSON: what subprocesses of a case print (git clone's messages) goes to stderr
    sys.stdout.flush()
    json_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    results = run_cases(cases, ours)
    sys.stdout.flush()
    json.dump(results, json_out)
    json_out.flush()


if __name__ == "__main__":
    main()
