"""Parity with the SageMaker Python SDK v3: for every framework/version/region in our matrix, the
registry account and repository equal what `sagemaker.core.image_uris.retrieve` returns.

The SDK lives in its own interpreter (.venv-sagemaker, installed by scripts/run_tests.sh) so it
never enters the project's environment; scripts/sagemaker_parity.py answers all queries in one run.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sagelaunch.jobspec import catalog as support

ROOT = Path(__file__).resolve().parents[2]
SDK_PYTHON = ROOT / ".venv-sagemaker" / "bin" / "python"
INSTALL = "bash scripts/run_tests.sh (it makes .venv-sagemaker)"


def queries() -> list[dict]:
    out = []
    for fw in support.FRAMEWORKS:
        for scope in ("training", "inference", "inference_graviton"):
            for version in support.framework_versions(fw, scope):
                entry = support.version_entry(fw, version, scope)
                if scope == "inference_graviton":
                    instance_type = "ml.c6g.xlarge"
                else:
                    instance_type = "ml.g5.xlarge" if "gpu" in entry["processors"] else "ml.m5.xlarge"
                for region in entry["regions"]:
                    out.append({
                        "framework": fw, "scope": scope, "version": entry.get("sdk_version", version), "ours": version,
                        "py_version": (entry["py_versions"] or [None])[-1], "region": region, "instance_type": instance_type,
                    })
    return out


def test_registry_account_and_repository_match_the_sdk():
    if not SDK_PYTHON.exists():
        pytest.fail(f"the parity check needs the SageMaker SDK in its own venv; run: {INSTALL}")
    qs = queries()
    assert len(qs) > 1000  # every framework × version × region
    proc = subprocess.run([str(SDK_PYTHON), str(ROOT / "scripts" / "sagemaker_parity.py")], input=json.dumps(qs),
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    answers = json.loads(proc.stdout)
    mismatches = []
    for q, ref in zip(qs, answers, strict=True):
        entry = support.version_entry(q["framework"], q["ours"], q["scope"], q["py_version"])
        if q["scope"] == "training":
            uri = support.training_image_uri(q["framework"], q["ours"], q["py_version"], q["region"], q["instance_type"])
        else:
            uri = support.inference_image_uri(q["framework"], q["ours"], q["region"], q["instance_type"], q["py_version"])
        ours = _account_repository_domain(uri)
        theirs = None if "error" in ref else _account_repository_domain(ref["uri"])
        if ours != theirs:
            mismatches.append((q, ours, ref))
        # full tag too, wherever the SDK knows it: an OS in its tag (container_version) or our moving tag
        if "error" not in ref and ("ubuntu" in ref["uri"] or "os" not in entry) and uri != ref["uri"]:
            mismatches.append((q, uri, ref))
    assert mismatches == [], mismatches[:5]


def _account_repository_domain(uri: str) -> tuple[str, str, str]:
    registry, _, rest = uri.partition("/")
    return registry.split(".", 1)[0], rest.split(":", 1)[0], registry.split(".ecr.")[1].split(".", 1)[1]
