"""Reference image URIs from the SageMaker Python SDK — v3 (tests/foundation/test_parity.py) or v2
(tests/parity_v2/test_images.py), whichever the interpreter has.

Runs under a separate interpreter that has `sagemaker` installed (.venv-sagemaker or .venv-sagemaker-v2),
never in the project's venv. Reads a JSON list of queries on stdin —
{"framework", "scope", "version", "py_version", "region", "instance_type"} — and prints a JSON
list of {"account", "repository", "uri"} or {"error"} in the same order.
"""

from __future__ import annotations

import json
import logging
import sys
import warnings


def main() -> None:
    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    import functools

    try:
        from sagemaker.core import common_utils, image_uris  # the SDK v3 location of retrieve()
    except ImportError:
        from sagemaker import image_uris  # SDK v2
        from sagemaker import utils as common_utils

    # retrieve() re-reads botocore's endpoints.json on every call (~90 ms); the file does not
    # change within a run, so memoise that loader only — retrieve's own logic runs unchanged.
    common_utils._botocore_resolver = functools.lru_cache(maxsize=1)(common_utils._botocore_resolver)

    queries = json.load(sys.stdin)
    out = []
    for q in queries:
        try:
            uri = image_uris.retrieve(
                q["framework"], q["region"], version=q["version"], py_version=q.get("py_version"),
                instance_type=q["instance_type"], image_scope=q["scope"],
            )
        except Exception as err:  # report, do not stop: the test names the failing query
            out.append({"error": f"{type(err).__name__}: {err}"})
            continue
        registry, _, rest = uri.partition("/")
        out.append({"account": registry.split(".", 1)[0], "repository": rest.split(":", 1)[0], "uri": uri})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
