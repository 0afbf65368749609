"""Vendor SageMaker Python SDK v2's image facts into jobspec/support_matrix.json (rerun when v2 changes).

    python scripts/vendor_sdk_v2_images.py [path/to/sagemaker/image_uri_config]

Reads v2's own image_uri_config (default: the one installed in .venv-sagemaker-v2) and writes, for
PyTorch, TensorFlow and Hugging Face, every version v2 resolves to an image: repository, Python versions,
processors, regions (with the registry account where it differs from the region's DLC account), v2's
version aliases and the special container versions v2 appends on p4d. Versions the matrix already has
keep their full-tag facts (os, cuda, tag_source). The data is Apache-2.0 (jobspec/NOTICE).
Standard library only.
"""

from __future__ import annotations

import glob
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MATRIX = ROOT / "jobspec" / "support_matrix.json"
SCOPES = ("training", "inference", "inference_graviton")
SOURCE = "sdk-v2"
# image_uris._get_image_tag: the container version v2 appends to these moving tags on p4d or with smdistributed
P4D_CONTAINER_VERSIONS = {
    "tensorflow-2.3-gpu-py37": "cu110-ubuntu18.04-v3", "tensorflow-2.3.1-gpu-py37": "cu110-ubuntu18.04",
    "tensorflow-2.3.2-gpu-py37": "cu110-ubuntu18.04", "tensorflow-1.15-gpu-py37": "cu110-ubuntu18.04-v8",
    "tensorflow-1.15.4-gpu-py37": "cu110-ubuntu18.04", "tensorflow-1.15.5-gpu-py37": "cu110-ubuntu18.04",
    "pytorch-1.6-gpu-py36": "cu110-ubuntu18.04-v3", "pytorch-1.6.0-gpu-py36": "cu110-ubuntu18.04",
    "pytorch-1.6-gpu-py3": "cu110-ubuntu18.04-v3", "pytorch-1.6.0-gpu-py3": "cu110-ubuntu18.04",
}

# tensorflow/model.py: the TF Serving image v2 uses for models of these training versions
TF_SERVING_VERSIONS = {"2.12.0": "2.12.1", "2.16.2": "2.16.1"}


def v2_config_dir() -> Path:
    found = glob.glob(str(ROOT / ".venv-sagemaker-v2" / "lib" / "python3*" / "site-packages" / "sagemaker" / "image_uri_config"))
    if not found:
        sys.exit("no SDK v2 found: pass the path of sagemaker/image_uri_config, or install .venv-sagemaker-v2")
    return Path(found[0])


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in version.split("."))


def _placement(block: dict, default_accounts: dict) -> dict:
    """regions, and the accounts that differ from the region's DLC account."""
    registries = block["registries"]
    out: dict = {"regions": sorted(registries)}
    differing = {r: a for r, a in sorted(registries.items()) if default_accounts.get(r) != a}
    if differing:
        out["registries"] = differing
    return out


def framework_scope(v2: dict, ours: dict, default_accounts: dict, scope: str) -> dict:
    versions = dict(ours.get("versions", {}))
    for version, block in v2["versions"].items():
        entry = dict(versions.get(version, {}))
        processors = v2.get("processors") or block.get("processors") or ["cpu"]
        if "repository" in block:
            entry["repository"] = block["repository"]
            entry["py_versions"] = block.get("py_versions", [])
            entry.update(_placement(block, default_accounts))
        else:  # v2 keys some old versions by Python version (TensorFlow 1.13.1): each its own repository
            by_py = {py: {"repository": b["repository"], **_placement(b, default_accounts)} for py, b in block.items()
                     if isinstance(b, dict) and "repository" in b}
            entry["py_versions"] = sorted(by_py)
            entry["by_py"] = by_py
            entry["repository"] = by_py[entry["py_versions"][-1]]["repository"]
            entry["regions"] = sorted(set().union(*(b["regions"] for b in by_py.values())))
        entry["processors"] = list(processors)
        if scope == "inference_graviton":
            entry["os"] = block["container_version"]["cpu"]
        entry.setdefault("tag_source", SOURCE)
        versions[version] = entry
    if scope == "inference":  # serving images: exactly v2's tags
        for version, entry in versions.items():
            versions[version] = {k: v for k, v in entry.items() if k not in ("os", "cuda")}
    return {
        "_source": f"{SOURCE}: image_uri_config/<framework>.json [{scope}] (versions, aliases, py_versions, "
                   "processors, registries, repository); full training tags (os, cuda) from each version's tag_source",
        "aliases": dict(v2.get("version_aliases", {})),
        "versions": dict(sorted(versions.items(), key=lambda kv: _key(kv[0]))),
    }


def huggingface(v2: dict, default_accounts: dict) -> dict:
    """transformers version → base framework (pytorchX.Y.Z / tensorflowX.Y.Z) → repository, py_versions, regions."""
    out: dict = {"_source": f"{SOURCE}: image_uri_config/huggingface.json (training and inference)"}
    for scope in ("training", "inference"):
        cfg = v2[scope]
        versions = {}
        for version, block in cfg["versions"].items():
            bases = {}
            for base, b in block.items():
                if base == "version_aliases" or not isinstance(b, dict) or "repository" not in b:
                    continue
                bases[base] = {"repository": b["repository"], "py_versions": b.get("py_versions", []),
                               "container_version": b.get("container_version", {}),
                               **_placement(b, default_accounts)}
            versions[version] = {"base_aliases": block.get("version_aliases", {}), "bases": bases}
        out[scope] = {"aliases": cfg.get("version_aliases", {}), "processors": cfg.get("processors", ["cpu", "gpu"]),
                      "versions": versions}
    return out


def main() -> None:
    config_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else v2_config_dir()
    matrix = json.loads(MATRIX.read_text())
    accounts = {k: v for k, v in matrix["dlc_registry_accounts"].items() if not k.startswith("_")}
    matrix["sources"][SOURCE] = ("SageMaker Python SDK v2 2.257.7 src/sagemaker/image_uri_config/*.json and image_uris.py "
                                 "(Apache-2.0, jobspec/NOTICE): what v2's image_uris.retrieve resolves")
    for framework in ("pytorch", "tensorflow"):
        v2 = json.loads((config_dir / f"{framework}.json").read_text())
        block = matrix["frameworks"][framework]
        for scope in SCOPES:
            block[scope] = framework_scope(v2[scope], block.get(scope, {}), accounts, scope)
    matrix["p4d_container_versions"] = {
        "_source": f"{SOURCE}: image_uris._get_image_tag (appended on ml.p4d.* or with an smdistributed distribution)",
        **P4D_CONTAINER_VERSIONS}
    matrix["serving_versions"] = {
        "_source": f"{SOURCE}: tensorflow/model.py TensorFlowModel (a training version whose serving image has "
                   "another version: 'TFS-2.12.0 was a bad release')", "tensorflow": TF_SERVING_VERSIONS}
    matrix["huggingface"] = huggingface(json.loads((config_dir / "huggingface.json").read_text()), accounts)
    MATRIX.write_text(json.dumps(matrix, indent=1) + "\n")


if __name__ == "__main__":
    main()
