"""Cross-field validation of an estimator: everything derived from its arguments, or a ValueError.

`resolve(est)` is pure and offline; the estimator runs it after every construction and
assignment, so a bad combination is caught where it is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from estimators import support
from estimators.distribution import DistributionPlan, parse_distribution
from launcher.spec import ProfilerSettings

if TYPE_CHECKING:
    from estimators.base import FrameworkEstimator

_TAG_VERSION = re.compile(r":(\d+\.\d+(?:\.\d+)?)-")
_TAG_PY = re.compile(r"-(py3\d*)")


@dataclass(frozen=True)
class Resolved:
    framework_version: str
    py_version: str
    image_uri: str
    region: str
    gpus_per_host: int
    plan: DistributionPlan
    profiler: ProfilerSettings | None
    repository: str  # image repository name: the default base job name


def resolve(est: "FrameworkEstimator") -> Resolved:
    framework = est.framework
    local = est.instance_type in support.LOCAL_INSTANCE_TYPES
    info = support.instance_info(est.instance_type)
    region = est.region or support.default_region()
    if not local:
        support.check_region(region)

    # framework version, Python version and image
    if est.image_uri is None:
        if est.framework_version is None:
            raise ValueError(
                f"framework_version is required (or image_uri); supported: "
                f"{', '.join(support.framework_versions(framework))}"
            )
        version = support.resolve_framework_version(framework, est.framework_version)
        py = support.check_py_version(framework, version, est.py_version)
        entry = support.version_entry(framework, version)
        if not local and region not in entry["regions"]:
            raise ValueError(
                f"region={region!r}: {framework} {version} images are not published there; "
                f"choose one of {', '.join(entry['regions'][:8])}, … or another framework_version"
            )
        image = support.training_image_uri(framework, version, py, region, est.instance_type)
        repository = entry["repository"]
    else:
        image = est.image_uri
        tag_version = _TAG_VERSION.search(image)
        version = est.framework_version or (tag_version.group(1) if tag_version else None)  # type: ignore[assignment]
        if version is None:
            raise ValueError("framework_version is required with an image_uri whose tag has no version")
        tag_py = _TAG_PY.search(image)
        py = est.py_version or (tag_py.group(1) if tag_py else "py3")
        repository = image.rsplit("/", 1)[-1].split(":")[0].split("@")[0]
        _check_image_processor(image, est.instance_type, info["kind"])

    if not local and est.role is None:
        raise ValueError(
            "role is required for SageMaker jobs; allowed: an IAM role ARN such as "
            "arn:aws:iam::<account-id>:role/SageMakerExecutionRole (or use instance_type='local')"
        )
    if est.output_path is not None and not est.output_path.startswith("s3://") and not local:
        raise ValueError(
            f"output_path={est.output_path!r}: SageMaker jobs write to S3; allowed: s3://<bucket>[/prefix] "
            "(a local folder works with instance_type='local')"
        )
    if est.use_spot_instances:
        if est.max_wait is None:
            raise ValueError(f"max_wait is required with use_spot_instances=True; set max_wait ≥ max_run={est.max_run}")
        if est.max_wait < est.max_run:
            raise ValueError(f"max_wait={est.max_wait} must be ≥ max_run={est.max_run} with spot instances")
    elif est.max_wait is not None:
        raise ValueError(f"max_wait={est.max_wait} applies to spot training only; set use_spot_instances=True or drop it")
    if (est.subnets is None) != (est.security_group_ids is None):
        raise ValueError("subnets and security_group_ids go together (VpcConfig); give both or neither")

    # profiler
    profiler = None
    if est.profiler_config is not None and est.disable_profiler:
        raise ValueError("profiler_config is set while disable_profiler=True; drop one of them")
    if est.disable_profiler:
        profiler = ProfilerSettings(disable_profiler=True)
    elif est.profiler_config is not None:
        profiler = est.profiler_config.to_settings()
        if not local and not profiler.disable_profiler:
            support.check_profiler_support(framework, version, region, est.instance_type)

    gpus = int(info.get("gpus", 0))
    plan = parse_distribution(
        est.distribution, framework=framework, framework_version=version, instance_type=est.instance_type,
        instance_count=est.instance_count, gpus_per_host=gpus,
    )
    if est.hyperparameters and len(est.hyperparameters) + len(plan.hyperparameters) + 5 > 100:
        raise ValueError("hyperparameters: too many entries with the distribution settings; allowed: 100 in all")
    return Resolved(version, py, image, region, gpus, plan, profiler, repository)


def _check_image_processor(image: str, instance_type: str, kind: str) -> None:
    tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
    if kind == "gpu" and "-cpu" in tag:
        raise ValueError(
            f"image_uri={image!r} is a CPU image but instance_type={instance_type!r} has GPUs; "
            "use the -gpu- tag of the image or a CPU instance type"
        )
    if kind == "cpu" and "-gpu" in tag and instance_type != "local":
        raise ValueError(
            f"image_uri={image!r} is a GPU image but instance_type={instance_type!r} has no GPU; "
            "use the -cpu- tag or a GPU instance type such as ml.g5.xlarge"
        )
