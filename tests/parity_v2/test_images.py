"""Every framework version SDK v2 resolves to an image is accepted, with v2's image URI.

The oracle is v2's own `image_uris.retrieve` (scripts/sagemaker_parity.py under .venv-sagemaker-v2): for each
PyTorch and TensorFlow version in v2's image_uri_config (training, inference, Graviton inference), each of its
Python versions, its aliases ('1.10'), CPU, GPU and p4d instances and regions with their own registry accounts,
our catalog gives v2's URI — training images with our full DLC tag where we know it (README: "Full DLC tags";
for an alias, the full tag of the patch it names), serving images exactly. A version v2 refuses is refused too.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess

import pytest

from sagelaunch.jobspec import catalog
from tests.fixtures.sdk_v2 import FULL_TAG, ROOT, SDK_V2_INSTALL, SDK_V2_PYTHON

REGIONS = ("us-east-1", "af-south-1", "cn-north-1")  # the usual account, a region of its own, another partition
INSTANCE_TYPES = {"training": ("ml.m5.xlarge", "ml.g5.xlarge", "ml.p4d.24xlarge"),
                  "inference": ("ml.m5.xlarge", "ml.g5.xlarge"), "inference_graviton": ("ml.c6g.xlarge",)}


def v2_config(framework: str) -> dict:
    found = glob.glob(str(ROOT / ".venv-sagemaker-v2/lib/python3*/site-packages/sagemaker/image_uri_config"))
    assert found, f"the image parity test needs the SDK v2's image_uri_config; run: {SDK_V2_INSTALL}"
    with open(os.path.join(found[0], f"{framework}.json")) as f:
        return json.load(f)


def queries() -> list[dict]:
    out = []
    for framework in catalog.FRAMEWORKS:
        config = v2_config(framework)
        for scope, types in INSTANCE_TYPES.items():
            block = config[scope]
            for version, entry in block["versions"].items():
                pys = entry.get("py_versions") or sorted(k for k in entry if k.startswith("py")) or [None]
                for py in pys:
                    for region in REGIONS:
                        for instance_type in types:
                            out.append({"framework": framework, "scope": scope, "version": version, "py_version": py,
                                        "region": region, "instance_type": instance_type})
            for alias in block.get("version_aliases", {}):
                out.append({"framework": framework, "scope": scope, "version": alias, "py_version": None,
                            "region": "us-east-1", "instance_type": types[0]})
    return out


def ours(q: dict) -> str:
    if q["scope"] == "training":
        version = catalog.resolve_framework_version(q["framework"], q["version"])
        py = catalog.check_py_version(q["framework"], version, q["py_version"])
        return catalog.training_image_uri(q["framework"], q["version"], py, q["region"], q["instance_type"])
    return catalog.inference_image_uri(q["framework"], q["version"], q["region"], q["instance_type"], q["py_version"])


def test_every_version_v2_resolves_is_accepted_with_v2s_image():
    if not SDK_V2_PYTHON.exists():
        pytest.fail(f"the v2 image parity test needs the SageMaker SDK v2 in its own venv; run: {SDK_V2_INSTALL}")
    qs = queries()
    assert len(qs) > 1500
    for q in qs:  # v2 needs a py_version where the version has several; ours derives one: give v2 the same
        version = catalog.resolve_framework_version(q["framework"], q["version"], q["scope"])
        if q["py_version"] is None and catalog.py_versions(q["framework"], version, q["scope"]):
            q["py_version"] = catalog.check_py_version(q["framework"], version, None, q["scope"])
    proc = subprocess.run([str(SDK_V2_PYTHON), str(ROOT / "scripts" / "sagemaker_parity.py")], input=json.dumps(qs),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    mismatches, compared = [], 0
    for q, ref in zip(qs, json.loads(proc.stdout), strict=True):
        try:
            uri = ours(q)
        except ValueError as err:
            uri = f"refused: {err}"
        if "error" in ref:  # v2 refuses it (a region without the image, a GPU-less Graviton…): so do we
            if not uri.startswith("refused") and q["region"] in catalog.version_entry(
                    q["framework"], catalog.resolve_framework_version(q["framework"], q["version"], q["scope"]),
                    q["scope"], q["py_version"])["regions"]:
                mismatches.append((q, uri, ref["error"][:200]))
            continue
        compared += 1
        full = FULL_TAG.match(uri)
        # an alias ('2.0') gets the full tag of the patch it names (2.0.1), v2 the alias's moving tag
        resolved = catalog.resolve_framework_version(q["framework"], q["version"], q["scope"])
        moving = ref["uri"].replace(f":{q['version']}-", f":{resolved}-")
        if uri != ref["uri"] and not (q["scope"] == "training" and full and full.group("moving") == moving):
            mismatches.append((q, uri, ref["uri"]))
    assert mismatches == [], f"{len(mismatches)} of {len(qs)}: {mismatches[:8]}"
    assert compared > 1000
