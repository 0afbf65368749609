"""The support catalog: pure lookups and checks over support_matrix.json (facts there, rules here).

Images, regions, instance types, GPUs, distribution and profiler support. No environment is read
(the configured region and this machine's GPUs are probed by `sagelaunch.launcher.common.environment`). The matrix
loads on first use, so `import sagelaunch.estimators` stays cheap. Every check raises a ValueError that names
the field, the value, what is supported and a likely fix.
"""

from __future__ import annotations

import json
import warnings
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.suggest import allowed_list, choice_error, did_you_mean, fix_from_hint

# the framework as the catalog names it → its estimator class (and how AWS writes it)
FRAMEWORK_CLASS_NAMES = {"pytorch": "PyTorch", "tensorflow": "TensorFlow"}

MATRIX_PATH = Path(__file__).with_name("support_matrix.json")
FRAMEWORKS = ("pytorch", "tensorflow")
DEFAULT_ACCOUNT = "763104351884"  # the DLC account of most regions


def image_framework(image: str) -> str | None:
    """The framework whose training toolkit an image runs (pytorch / tensorflow, Hugging Face's on PyTorch), from
    its repository name as the DLC repositories are named; None for any other image."""
    repository = image.rsplit("/", 1)[-1].split(":")[0].split("@")[0]
    for prefix, framework in (("pytorch-training", "pytorch"), ("tensorflow-training", "tensorflow"),
                              ("huggingface-pytorch-training", "pytorch")):
        if repository == prefix:
            return framework
    return None


@lru_cache(maxsize=1)
def matrix() -> dict[str, Any]:
    with open(MATRIX_PATH, "rb") as f:
        return json.load(f)


def _facts(block: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in block.items() if not k.startswith("_")}


# ---------------------------------------------------------------- versions
# SDK v2's image facts (scripts/vendor_sdk_v2_images.py): every version v2 resolves to an image is accepted
def _scope(framework: str, scope: str) -> dict[str, Any]:
    return matrix()["frameworks"][framework][scope]


@lru_cache(maxsize=None)
def framework_versions(framework: str, scope: str = "training") -> tuple[str, ...]:
    return tuple(_scope(framework, scope)["versions"])


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) if p.isdigit() else 0 for p in v.split("."))


def version_entry(framework: str, version: str, scope: str = "training", py_version: str | None = None) -> dict[str, Any]:
    """The facts of one version; `py_version` picks its own repository where v2 keys one by Python version."""
    entry = _scope(framework, scope)["versions"][version]
    by_py = entry.get("by_py", {})
    return {**entry, **by_py[py_version]} if py_version in by_py else entry


def resolve_framework_version(framework: str, version: str, scope: str = "training") -> str:
    """Exact version, v2's alias ('1.10' → '1.10.2'), else the newest patch of a 'major.minor'."""
    versions = framework_versions(framework, scope)
    if version in versions:
        return version
    alias = _scope(framework, scope).get("aliases", {}).get(version)
    if alias:
        return alias
    same_minor = [v for v in versions if v.rsplit(".", 1)[0] == version]
    if same_minor:
        return max(same_minor, key=_version_key)
    hint = _version_hint(version, versions)
    raise SagelaunchError(
        f"framework_version={version!r} has no {framework} {scope.replace('_', ' ')} image (SDK v2 refuses it too); "
        f"supported: {allowed_list(reversed(versions))} (newest first){hint}", field="framework_version",
        value=version, allowed=", ".join(reversed(versions)), fix=fix_from_hint(hint, "pick a supported version"))


def _version_hint(version: str, versions: tuple[str, ...]) -> str:
    """Another patch of the same minor version first ('1.7.0' → '1.7.1'), else the nearest spelling."""
    minor = version.rsplit(".", 1)[0]
    same_minor = [v for v in versions if v.rsplit(".", 1)[0] == minor]
    return f" (did you mean {max(same_minor, key=_version_key)!r}?)" if same_minor else did_you_mean(version, versions)


def support_status(framework: str, version: str, scope: str = "training", today: date | None = None) -> str | None:
    """None while AWS patches this version's images; else a sentence naming its status (DLC support policy)."""
    policy = matrix()["support_policy"]
    minor = ".".join(version.split(".")[:2])
    table = policy[framework].get("inference" if scope.startswith("inference") else "training", {})
    end = table.get(minor)
    today = today or date.today()
    if end is not None and date.fromisoformat(end) >= today:
        return None
    name = FRAMEWORK_CLASS_NAMES[framework]
    why = f"its end of patch was {end}" if end else "it is not in the DLC framework support policy's supported table"
    return (f"framework_version={version!r}: AWS no longer patches {name} {minor} "
            f"{scope.replace('_', ' ')} images ({why}); the image still runs, without security fixes")


class UnpatchedVersionWarning(UserWarning):
    """A framework version whose images AWS no longer patches (accepted, as SDK v2 accepts it)."""


def warn_if_unpatched(framework: str, version: str, scope: str = "training") -> None:
    status = support_status(framework, version, scope)
    if status:
        warnings.warn(status, UnpatchedVersionWarning, stacklevel=3)


def py_versions(framework: str, version: str, scope: str = "training") -> list[str]:
    return list(version_entry(framework, version, scope)["py_versions"])


def check_py_version(framework: str, version: str, py_version: str | None, scope: str = "training") -> str:
    allowed = py_versions(framework, version, scope)
    if py_version is None:
        return allowed[-1] if allowed else "py3"
    if allowed and py_version not in allowed:
        hint = did_you_mean(py_version, allowed)
        raise SagelaunchError(
            f"py_version={py_version!r} is not available for {framework} {version}; supported: "
            f"{', '.join(allowed)}{hint} (or omit py_version to derive it)", field="py_version", value=py_version,
            allowed=", ".join(allowed), fix=fix_from_hint(hint, "omit py_version to derive it"))
    return py_version


# ---------------------------------------------------------------- regions
@lru_cache(maxsize=1)
def regions() -> tuple[str, ...]:
    return tuple(_facts(matrix()["dlc_registry_accounts"]))


def check_region(region: str) -> str:
    if region not in regions():
        raise choice_error("region", region, regions())
    return region


def registry_account(region: str) -> str:
    return _facts(matrix()["dlc_registry_accounts"]).get(region, DEFAULT_ACCOUNT)


def ecr_domain(region: str) -> str:
    """DNS suffix of the region's partition (first matching prefix in the matrix; "" matches all)."""
    for prefix, domain in _facts(matrix()["ecr_domains"]).items():
        if region.startswith(prefix):
            return domain
    return "amazonaws.com"


def registry(region: str, account: str | None = None) -> str:
    return f"{account or registry_account(region)}.dkr.ecr.{region}.{ecr_domain(region)}"


LOCAL_DEFAULT_REGION = "us-east-1"  # local jobs only name images; any region will do


# ---------------------------------------------------------------- instance types
@lru_cache(maxsize=1)
def training_instance_types() -> tuple[str, ...]:
    return tuple(_facts(matrix()["instance_types"]))


LOCAL_INSTANCE_TYPES = ("local", "local_gpu")  # "this machine"; every other layer asks jobspec.instance_types
LOCAL_GPU_MINIMUM = 1  # what "local_gpu" promises; the machine's real count is launcher.environment's probe


def instance_info(instance_type: str) -> dict[str, Any]:
    """Facts of a training instance type; "local" has no GPU, "local_gpu" at least LOCAL_GPU_MINIMUM."""
    if instance_type == "local":
        return {"kind": "cpu", "gpus": 0}
    if instance_type == "local_gpu":
        return {"kind": "gpu", "gpus": LOCAL_GPU_MINIMUM}
    info = matrix()["instance_types"].get(instance_type)
    if info is None or instance_type.startswith("_"):
        raise choice_error("instance_type", instance_type, (*training_instance_types(), *LOCAL_INSTANCE_TYPES))
    return info


def instance_family(instance_type: str) -> str:
    """'p4d' of 'ml.p4d.24xlarge'; '' for local and malformed types."""
    return instance_type.split(".")[1] if instance_type.count(".") == 2 else ""


def check_instance_type(instance_type: str) -> str:
    instance_info(instance_type)
    return instance_type


def gpus_per_host(instance_type: str) -> int:
    return int(instance_info(instance_type).get("gpus", 0))


def processor_for(instance_type: str) -> str:
    kind = instance_info(instance_type)["kind"]
    return {"gpu": "gpu", "cpu": "cpu", "trainium": "neuron", "graviton": "cpu"}[kind]


# ---------------------------------------------------------------- images
def _moving_tag(framework: str, tag_version: str, entry: dict[str, Any], py_version: str, processor: str,
                scope: str, instance_type: str, smdistributed: bool) -> str:
    """The tag SDK v2's image_uris.retrieve builds (image_uris._format_tag and _get_image_tag)."""
    tag = "-".join(p for p in (tag_version, processor, py_version if entry["py_versions"] else "") if p)
    if scope == "inference_graviton":  # v2: container_version + "-sagemaker"
        return f"{tag}-{entry['os']}-sagemaker"
    if instance_family(instance_type) == "p4d" or smdistributed:
        suffix = matrix()["p4d_container_versions"].get(f"{framework}-{tag}")
        tag = f"{tag}-{suffix}" if suffix else tag
    return tag


def image_tag(framework: str, version: str, py_version: str, processor: str, scope: str = "training",
              tag_version: str | None = None, instance_type: str = "", smdistributed: bool = False) -> str:
    """Training: the full DLC tag where the matrix knows it, else v2's tag; serving: exactly v2's tag.
    `tag_version` is the version as written (v2 tags an alias such as '1.10' as written)."""
    entry = version_entry(framework, version, scope, py_version)
    if processor not in entry["processors"]:
        raise SagelaunchError(
            f"{framework} {version} has no {processor.upper()} {scope.replace('_', ' ')} image; "
            f"available: {', '.join(entry['processors'])} images — pick a matching instance_type",
            field="instance_type", value=instance_type or processor, allowed=f"{', '.join(entry['processors'])} instances",
            fix="pick a matching instance_type")
    if scope == "training" and "os" in entry:
        cuda = f"-{entry['cuda']}" if processor == "gpu" and entry.get("cuda") else ""
        return f"{version}-{processor}-{py_version}{cuda}-{entry['os']}-sagemaker"
    return _moving_tag(framework, tag_version or version, entry, py_version, processor, scope, instance_type,
                       smdistributed)


def _uri(framework: str, version: str, py_version: str, region: str, scope: str, tag: str) -> str:
    entry = version_entry(framework, version, scope, py_version)
    account = entry.get("registries", {}).get(region)  # old images live in other accounts
    return f"{registry(region, account)}/{entry['repository']}:{tag}"


def image_uri(
    framework: str, version: str, py_version: str, region: str, instance_type: str, scope: str = "training",
    smdistributed: bool = False,
) -> str:
    resolved = resolve_framework_version(framework, version, scope)
    entry = version_entry(framework, resolved, scope, py_version)
    processor = processor_for(instance_type)
    if processor == "neuron":
        fix = "pass image_uri=... or choose a GPU instance such as ml.p4d.24xlarge"
        raise SagelaunchError(
            f"instance_type={instance_type!r} is a Trainium instance: it needs a Neuron image "
            f"({framework}-training-neuronx); {fix}", field="instance_type", value=instance_type,
            allowed="CPU or GPU instances (Trainium with image_uri)", fix=fix)
    if instance_type in LOCAL_INSTANCE_TYPES and processor not in entry["processors"]:
        processor = entry["processors"][0]  # local runs use no image: name the one SageMaker has
    tag = image_tag(framework, resolved, py_version, processor, scope, version, instance_type, smdistributed)
    return _uri(framework, resolved, py_version, region, scope, tag)


def training_image_uri(framework: str, version: str, py_version: str, region: str, instance_type: str,
                       smdistributed: bool = False) -> str:
    return image_uri(framework, version, py_version, region, instance_type, "training", smdistributed)


def is_graviton(instance_type: str) -> bool:
    parts = instance_type.split(".")
    return len(parts) == 3 and parts[1] in matrix()["graviton_families"]


def inference_scope(instance_type: str) -> str:
    return "inference_graviton" if is_graviton(instance_type) else "inference"


def serving_processor(instance_type: str) -> str:
    """cpu or gpu for a serving instance type (serving-only types included: ml.g4dn, ml.c6g…)."""
    if instance_type in LOCAL_INSTANCE_TYPES:
        return "gpu" if instance_type == "local_gpu" else "cpu"
    info = matrix()["inference_instance_types"].get(instance_type) or matrix()["instance_types"].get(instance_type)
    kind = info["kind"] if info else ("gpu" if instance_family(instance_type)[:1] in ("p", "g") else "cpu")
    return "gpu" if kind == "gpu" else "cpu"


def inference_image_uri(
    framework: str, version: str, region: str, instance_type: str, py_version: str | None = None
) -> str:
    """Serving image for `deploy`, exactly as SDK v2 resolves it: Graviton images on ARM instances, else
    CPU/GPU; a version without a serving image is refused (as v2 does), naming the nearest one."""
    check_framework(framework)
    scope = inference_scope(instance_type)
    versions = framework_versions(framework, scope)
    version = matrix()["serving_versions"].get(framework, {}).get(version, version)  # v2's TF 2.12.0 → 2.12.1
    try:
        resolved = resolve_framework_version(framework, version, scope)
    except ValueError:
        older = [v for v in versions if _version_key(v) <= _version_key(version)] or list(versions)
        nearest = max(older, key=_version_key)
        fix = f"serve it with framework_version={nearest!r} (the nearest), or pass image_uri=..."
        raise SagelaunchError(
            f"framework_version={version!r} has no {framework} {scope.replace('_', ' ')} image (SDK v2 refuses it too); "
            f"{fix}; supported: {allowed_list(reversed(versions))} (newest first)", field="framework_version",
            value=version, allowed=", ".join(reversed(versions)), fix=fix) from None
    py = check_py_version(framework, resolved, py_version, scope)
    processor = "cpu" if scope == "inference_graviton" else serving_processor(instance_type)
    tag = image_tag(framework, resolved, py, processor, scope, version, instance_type)
    return _uri(framework, resolved, py, region, scope, tag)


# ---------------------------------------------------------------- Hugging Face DLCs (v2's HuggingFace classes)
def huggingface_image_uri(transformers_version: str, pytorch_version: str, py_version: str | None, region: str,
                          instance_type: str, scope: str = "training") -> tuple[str, str]:
    """(image URI, py_version) of the Hugging Face PyTorch DLC, as v2's image_uris.retrieve builds it:
    <pytorch>-transformers<transformers>-<processor>-<py>-<container version>, each version as written."""
    hf = matrix()["huggingface"][scope]
    key = transformers_version if transformers_version in hf["versions"] else hf["aliases"].get(transformers_version)
    if key is None:
        hint = did_you_mean(transformers_version, list(hf["versions"]))
        raise SagelaunchError(
            f"transformers_version={transformers_version!r} has no Hugging Face {scope} image (SDK v2 refuses it "
            f"too); supported: {allowed_list(reversed(list(hf['versions'])))} (newest first){hint}",
            field="transformers_version", value=transformers_version, allowed=", ".join(reversed(list(hf["versions"]))),
            fix=fix_from_hint(hint, "pick a supported version"))
    entry = hf["versions"][key]
    base = entry["base_aliases"].get(f"pytorch{pytorch_version}", f"pytorch{pytorch_version}")
    if base not in entry["bases"]:
        paired = [b.removeprefix("pytorch") for b in entry["bases"] if b.startswith("pytorch")]
        raise SagelaunchError(
            f"pytorch_version={pytorch_version!r}: the Hugging Face {scope} image of transformers {key} is built "
            f"with PyTorch {', '.join(paired) or '(none: TensorFlow only)'}; set pytorch_version to one of them",
            field="pytorch_version", value=pytorch_version, allowed=", ".join(paired),
            fix="set pytorch_version to one of them")
    image = entry["bases"][base]
    py = py_version or image["py_versions"][-1]
    if py not in image["py_versions"]:
        raise SagelaunchError(f"py_version={py!r} is not available for transformers {key} with PyTorch "
                              f"{base.removeprefix('pytorch')}; supported: {', '.join(image['py_versions'])}",
                              field="py_version", value=py, allowed=", ".join(image["py_versions"]),
                              fix="pick a supported py_version, or omit it")
    processor = processor_for(instance_type) if scope == "training" else serving_processor(instance_type)
    if instance_type in LOCAL_INSTANCE_TYPES and processor not in hf["processors"]:
        processor = hf["processors"][0]  # local runs use no image: name the one SageMaker has
    if processor not in hf["processors"]:
        raise SagelaunchError(f"instance_type={instance_type!r}: Hugging Face {scope} images are "
                              f"{'/'.join(hf['processors'])} only; choose a GPU instance type such as ml.g5.xlarge",
                              field="instance_type", value=instance_type, allowed=f"{'/'.join(hf['processors'])} instances",
                              fix="choose a GPU instance type such as ml.g5.xlarge")
    tag = "-".join(p for p in (f"{pytorch_version}-transformers{transformers_version}", processor, py,
                               image["container_version"].get(processor)) if p)
    return f"{registry(region, image.get('registries', {}).get(region))}/{image['repository']}:{tag}", py


def check_framework(framework: str) -> str:
    if framework not in FRAMEWORKS:
        raise choice_error("framework", framework, FRAMEWORKS)
    return framework


# ---------------------------------------------------------------- profiler
def profiler_facts() -> dict[str, Any]:
    return matrix()["profiler"]


def check_profiler_support(framework: str, version: str, region: str, instance_type: str) -> None:
    """SageMaker Profiler's own matrix; only for jobs that run on SageMaker."""
    p = profiler_facts()
    versions = list(p["images"][framework])
    if version not in versions:
        fix = f"set framework_version={versions[0]!r}, drop profiler_config, or run with instance_type='local'"
        raise SagelaunchError(
            f"framework_version={version!r}: SageMaker Profiler supports {framework} {', '.join(versions)} only; {fix}",
            field="framework_version", value=version, allowed=", ".join(versions), fix=fix)
    if region not in p["regions"]:
        hint = did_you_mean(region, p["regions"])
        raise SagelaunchError(
            f"region={region!r}: SageMaker Profiler is available in {', '.join(p['regions'])}"
            f"{hint}; choose one of them or drop profiler_config", field="region", value=region,
            allowed=", ".join(p["regions"]), fix=fix_from_hint(hint, "choose one of them or drop profiler_config"))
    if instance_type not in p["instance_types"]:
        hint = did_you_mean(instance_type, p["instance_types"])
        raise SagelaunchError(
            f"instance_type={instance_type!r}: SageMaker Profiler supports {', '.join(p['instance_types'])}"
            f"{hint}; choose one of them or drop profiler_config", field="instance_type", value=instance_type,
            allowed=", ".join(p["instance_types"]), fix=fix_from_hint(hint, "choose one of them or drop profiler_config"))


def profiler_image_uri(framework: str, version: str, region: str) -> str:
    return f"{registry(region)}/{profiler_facts()['images'][framework][version]}"


def detailed_profiler_image_uri(region: str) -> str:
    d = profiler_facts()["detailed_profiler_processing"]
    account = d["registries"].get(region, d["registries"]["us-west-2"])
    return f"{registry(region, account)}/{d['repository']}:{d['tag']}"


# ---------------------------------------------------------------- debugger (monitoring, hook, rules)
def debugger_facts() -> dict[str, Any]:
    return matrix()["debugger"]


def region_supports_debugger(region: str) -> bool:
    """Debugger's hook and rules exist in this region (SDK v2's _region_supports_debugger)."""
    return region.lower() not in debugger_facts()["unsupported_regions"]


def monitoring_available(region: str, instance_type: str) -> bool:
    """Debugger's system monitoring (the default ProfilerConfig) runs here: not in a few regions, not on trn*."""
    family = instance_family(instance_type)
    return (region.lower() not in debugger_facts()["monitoring_unsupported_regions"]
            and not family.startswith(tuple(debugger_facts()["monitoring_unsupported_instance_families"])))


def check_framework_profiling(framework: str, version: str) -> None:
    """Debugger's framework profiling (FrameworkProfile) collects nothing from PyTorch 2.0 / TensorFlow 2.12 on."""
    last = debugger_facts()["framework_profiling_discontinued_from"][framework]
    if _version_key(version) >= _version_key(last):
        fix = "use ProfilerConfig(profile_params=Profiler(...)) for SageMaker Profiler, or an older version"
        raise SagelaunchError(
            f"profiler_config.framework_profile_params: SageMaker Debugger's framework profiling was discontinued "
            f"from {framework} {last} (SDK v2 warns that no framework metrics are collected) and framework_version="
            f"{version!r}; {fix}", field="profiler_config.framework_profile_params", value=version,
            allowed=f"{framework} versions before {last}", fix=fix)


def rule_evaluator_image_uri(region: str) -> str:
    """The built-in Debugger/Profiler rules' evaluator image (SDK v2's image_uris.retrieve("debugger", region))."""
    d = debugger_facts()["rule_evaluator"]
    account = d["registries"].get(region)
    if account is None:
        fix = "drop rules= or give each rule its image_uri (Rule.custom)"
        raise SagelaunchError(
            f"rules: SageMaker Debugger's rule evaluator has no image in region={region!r}; available in "
            f"{allowed_list(sorted(d['registries']))}; {fix}", field="rules", value=region,
            allowed=", ".join(sorted(d["registries"])), fix=fix)
    return f"{registry(region, account)}/{d['repository']}:{d['tag']}"


# ---------------------------------------------------------------- distribution support
def check_distribution_support(strategy: str, framework: str, version: str, instance_type: str) -> None:
    d = matrix()["distribution"]
    info = instance_info(instance_type)
    if strategy == "dataparallel":
        types, versions = d["dataparallel"]["instance_types"], d["dataparallel"]["versions"][framework]
        if instance_type not in types:
            hint = did_you_mean(instance_type, types)
            raise SagelaunchError(
                f"instance_type={instance_type!r}: smdistributed dataparallel runs on {', '.join(types)} only"
                f"{hint}; or use torch_distributed", field="instance_type", value=instance_type,
                allowed=", ".join(types), fix=fix_from_hint(hint, "use torch_distributed"))
        if version not in versions:
            raise SagelaunchError(
                f"framework_version={version!r}: smdistributed dataparallel supports {framework} "
                f"{', '.join(versions) or 'no version'}; use torch_distributed for newer PyTorch",
                field="framework_version", value=version, allowed=", ".join(versions),
                fix="use torch_distributed for newer PyTorch")
    elif strategy == "torch_distributed":
        key = "trainium_versions" if info["kind"] == "trainium" else "gpu_versions"
        versions = d["torch_distributed"][key]
        if info["kind"] == "cpu":
            raise SagelaunchError(
                f"instance_type={instance_type!r}: torch_distributed needs GPU or Trainium instances; "
                "choose e.g. ml.g5.12xlarge or ml.p4d.24xlarge", field="instance_type", value=instance_type,
                allowed="GPU or Trainium instance types", fix="choose e.g. ml.g5.12xlarge or ml.p4d.24xlarge")
        if version not in versions:
            raise SagelaunchError(
                f"framework_version={version!r}: torch_distributed supports PyTorch {', '.join(versions)} "
                f"on {info['kind'].upper()} instances", field="framework_version", value=version,
                allowed=", ".join(versions), fix=f"choose one of {', '.join(versions)}")
    elif strategy == "pytorchddp":
        if info["kind"] != "gpu":
            raise SagelaunchError(f"instance_type={instance_type!r}: pytorchddp needs a GPU instance such as ml.g5.12xlarge",
                                  field="instance_type", value=instance_type, allowed="GPU instance types",
                                  fix="choose a GPU instance such as ml.g5.12xlarge")
        if _version_key(version) < _version_key(d["pytorchddp"]["min_version"]):
            minimum = d["pytorchddp"]["min_version"]
            raise SagelaunchError(f"framework_version={version!r}: pytorchddp needs PyTorch ≥ {minimum}",
                                  field="framework_version", value=version, allowed=f"≥ {minimum}",
                                  fix=f"use framework_version {minimum} or newer")
    elif strategy == "modelparallel":
        versions = d["modelparallel"]["versions"][framework]
        if info["kind"] != "gpu":
            raise SagelaunchError(
                f"instance_type={instance_type!r}: smdistributed modelparallel needs GPU instances "
                "(e.g. ml.p4d.24xlarge), or run with instance_type='local'", field="instance_type",
                value=instance_type, allowed="GPU instance types", fix="use e.g. ml.p4d.24xlarge, or instance_type='local'")
        if version not in versions:
            raise SagelaunchError(
                f"framework_version={version!r}: SMP v1 (smdistributed modelparallel) ships in {framework} "
                f"{', '.join(versions) or 'no'} images on SageMaker; use one of them or instance_type='local'",
                field="framework_version", value=version, allowed=", ".join(versions),
                fix="use one of them or instance_type='local'")
