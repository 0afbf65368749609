"""Cross-field validation of an estimator: everything derived from its arguments, or a ValueError.

`resolve(est)` is pure and offline; the estimator runs it after every construction and
assignment, so a bad combination is caught where it is written. Independent problems are
collected and reported together, one per line, each naming its field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from sagelaunch.estimators.debugger import check_debugger, profiler_settings
from sagelaunch.estimators.distribution import DistributionPlan, parse_distribution
from sagelaunch.estimators.settings import settings_problems, training_instance_type
from sagelaunch.jobspec import catalog as support
from sagelaunch.jobspec.instance_types import InstanceType, is_local, names_sagemaker_type
from sagelaunch.jobspec.instance_types import instance_type as instance_type_record
from sagelaunch.jobspec.errors import ProblemsError, SagelaunchError, SagelaunchException, SagelaunchRuntimeError, problem_of
from sagelaunch.jobspec.spec import ProfilerSettings
from sagelaunch.launcher import default_region, local_gpu_count
from sagelaunch.planner.validate import check_smp_memory

if TYPE_CHECKING:
    from sagelaunch.estimators.arguments import EstimatorArguments

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
    instance_type: str = ""  # instance_type, or the instance group's the image is chosen for


class _Problems:
    """Run checks, keep going after a failure, raise them all at the end (one ProblemsError)."""

    def __init__(self) -> None:
        self.problems: list[SagelaunchException] = []
        self.resolved: Resolved | None = None

    def add(self, *problems: SagelaunchException | str) -> None:
        self.problems.extend(p if isinstance(p, SagelaunchException) else SagelaunchError(p) for p in problems)

    def check(self, fn: Callable[[], Any], default: Any = None) -> Any:
        try:
            return fn()
        except ValueError as err:
            self.problems.append(problem_of(err))
            return default

    def raise_if_any(self) -> None:
        if self.problems:
            raise ProblemsError(self.problems)


def _image(est: EstimatorArguments, region: str, local: bool, info: InstanceType,
           instance_type: str) -> tuple[str, str, str, str]:
    """(framework_version, py_version, image_uri, repository)."""
    framework = est.framework
    if framework == "generic":
        return generic_image(est, local)
    if est.image_uri is not None:
        image = est.image_uri
        tag_version = _TAG_VERSION.search(image)
        version = est.framework_version or (tag_version.group(1) if tag_version else None)
        if version is None:
            raise SagelaunchError("framework_version is required with an image_uri whose tag has no version",
                                  field="framework_version", value=None, allowed="a version such as '2.0.0'",
                                  fix="set framework_version to the image's version")
        tag_py = _TAG_PY.search(image)
        py = est.py_version or (tag_py.group(1) if tag_py else "py3")
        _check_image_processor(image, info)
        return version, py, image, image.rsplit("/", 1)[-1].split(":")[0].split("@")[0]
    if est.framework_version is None:
        raise version_required(framework)
    version = support.resolve_framework_version(framework, est.framework_version)
    py = support.check_py_version(framework, version, est.py_version)
    entry = support.version_entry(framework, version, py_version=py)
    if not local and region not in entry["regions"]:
        fix = f"choose one of {', '.join(entry['regions'][:8])}, … or another framework_version"
        raise SagelaunchError(f"region={region!r}: {framework} {version} images are not published there; {fix}",
                              field="region", value=region, allowed=", ".join(entry["regions"]), fix=fix)
    support.warn_if_unpatched(framework, est.framework_version)
    return (version, *est.catalog_image(version, py, region, instance_type))


def generic_image(est: EstimatorArguments, local: bool) -> tuple[str, str, str, str]:
    """v2's generic Estimator: the image as given; locally only a framework image with an entry point runs."""
    image = est.image_uri or ""
    repository = image.rsplit("/", 1)[-1].split(":")[0].split("@")[0]
    if local and (support.image_framework(image) is None or est.entry_point is None):
        fix = ("use the framework estimator with an entry point, e.g. PyTorch(entry_point='train.py', "
               "framework_version=…, instance_type='local'), or run on SageMaker (an ml.* instance type)")
        why = ("runs its own program in a container, and local jobs run without Docker" if est.entry_point is None
               else "is not a PyTorch/TensorFlow training image, whose toolkit sagelaunch runs locally")
        raise SagelaunchError(f"image_uri={image!r} with instance_type='local': the image {why}; {fix}",
                              field="image_uri", value=image, allowed="a PyTorch/TensorFlow training image with an "
                              "entry_point", fix=fix)
    tag_version = _TAG_VERSION.search(image)
    tag_py = _TAG_PY.search(image)
    return (tag_version.group(1) if tag_version else "", tag_py.group(1) if tag_py else "", image, repository)


def _job_settings(est: EstimatorArguments, local: bool) -> None:
    if not local and est.role is None:
        allowed = "an IAM role ARN such as arn:aws:iam::<account-id>:role/SageMakerExecutionRole"
        raise SagelaunchError(f"role is required for SageMaker jobs; allowed: {allowed} (or use instance_type='local')",
                              field="role", value=None, allowed=allowed, fix="pass role=…, or use instance_type='local'")


def _output(est: EstimatorArguments, local: bool) -> None:
    if est.output_path is not None and not est.output_path.startswith("s3://") and not local:
        raise SagelaunchError(
            f"output_path={est.output_path!r}: SageMaker jobs write to S3; allowed: s3://<bucket>[/prefix] "
            "(a local folder works with instance_type='local')", field="output_path", value=est.output_path,
            allowed="s3://<bucket>[/prefix]", fix="write to S3, or use instance_type='local' for a local folder")


def _spot(est: EstimatorArguments) -> None:
    if est.use_spot_instances:
        if est.max_wait is None:
            raise SagelaunchError(f"max_wait is required with use_spot_instances=True; set max_wait ≥ max_run={est.max_run}",
                                  field="max_wait", value=None, allowed=f"≥ max_run={est.max_run}",
                                  fix=f"set max_wait ≥ max_run={est.max_run}")
        if est.max_wait < est.max_run:
            raise SagelaunchError(f"max_wait={est.max_wait} must be ≥ max_run={est.max_run} with spot instances",
                                  field="max_wait", value=est.max_wait, allowed=f"≥ max_run={est.max_run}",
                                  fix=f"set max_wait ≥ {est.max_run}")
    elif est.max_wait is not None:
        raise SagelaunchError(f"max_wait={est.max_wait} applies to spot training only; set use_spot_instances=True or "
                              "drop it", field="max_wait", value=est.max_wait, allowed="with use_spot_instances=True",
                              fix="set use_spot_instances=True or drop it")


def _vpc(est: EstimatorArguments) -> None:
    if (est.subnets is None) != (est.security_group_ids is None):
        given, missing = ("subnets", "security_group_ids") if est.subnets is not None else ("security_group_ids", "subnets")
        raise SagelaunchError("subnets and security_group_ids go together (VpcConfig); give both or neither",
                              field=missing, value=None, allowed=f"given with {given}", fix="give both or neither")


def _profiler(est: EstimatorArguments, version: str, region: str, local: bool,
              instance_type: str) -> ProfilerSettings | None:
    check_debugger(est, region, local)
    return profiler_settings(est, version, region, local, instance_type)


def _versions(est: EstimatorArguments) -> None:
    """The version checks that need no instance type (used when the instance type itself is wrong)."""
    if est.image_uri is not None:
        return
    if est.framework_version is None:
        raise version_required(est.framework)
    version = support.resolve_framework_version(est.framework, est.framework_version)
    support.check_py_version(est.framework, version, est.py_version)


def version_required(framework: str) -> SagelaunchError:
    versions = ", ".join(support.framework_versions(framework))
    return SagelaunchError(f"framework_version is required (or image_uri); supported: {versions}",
                           field="framework_version", value=None, allowed=versions,
                           fix="set framework_version (or image_uri)")


def resolve(est: EstimatorArguments) -> Resolved:
    """Everything derived from a valid estimator, or one ValueError listing every cross-field problem."""
    problems = cross_field_problems(est)
    problems.raise_if_any()
    if problems.resolved is None:  # no problem and no invalid field: cross_field_problems resolved it
        raise SagelaunchRuntimeError("the estimator has no problem but was not resolved")
    return problems.resolved


def cross_field_problems(est: EstimatorArguments, invalid: frozenset[str] = frozenset()) -> "_Problems":
    """Run every cross-field check whose fields are valid; `invalid` names fields that failed their own check
    (their values are then not to be trusted), so the rest can still be reported together with them."""
    problems = _Problems()

    def valid(*fields: str) -> bool:
        return invalid.isdisjoint(fields)

    instance_type = training_instance_type(est) if valid("instance_groups") else est.instance_type
    local = instance_type is not None and is_local(instance_type)
    # a misspelt ml.* type is still a SageMaker job; a misspelt "local" may not be
    sagemaker_job = not local and (valid("instance_type") or names_sagemaker_type(str(instance_type)))
    if valid("instance_groups"):
        problems.add(*settings_problems(est, local, valid))
    info = instance_type_record(instance_type) if valid("instance_type", "instance_groups") and instance_type else None
    region = None
    if valid("region"):
        region = problems.check(lambda: est.region or default_region(local=local or not sagemaker_job))
    region_ok = region is not None and (local or problems.check(lambda: support.check_region(region)) is not None)
    image = None
    if valid("framework_version", "py_version", "image_uri"):
        if info is not None and region_ok and region is not None and instance_type is not None:
            image_region, image_info, image_type = region, info, instance_type
            image = problems.check(lambda: _image(est, image_region, local, image_info, image_type))
        else:
            problems.check(lambda: _versions(est))
    if sagemaker_job and valid("role"):
        problems.check(lambda: _job_settings(est, local))
    if sagemaker_job and valid("output_path"):
        problems.check(lambda: _output(est, local))
    if valid("use_spot_instances", "max_wait", "max_run"):
        problems.check(lambda: _spot(est))
    if valid("subnets", "security_group_ids"):
        problems.check(lambda: _vpc(est))
    profiler, plan = None, None
    if image is not None and info is not None and region is not None and instance_type is not None:
        version, known_region, known_type = image[0], region, instance_type  # an image was found for these
        if valid("profiler_config", "disable_profiler", "rules", "debugger_hook_config", "tensorboard_output_config"):
            profiler = problems.check(lambda: _profiler(est, version, known_region, local, known_type))
        gpus = _gpus_per_host(info)
        if valid("distribution", "instance_count"):
            plan = problems.check(lambda: parse_distribution(
                est.distribution, framework=est.framework, framework_version=version, instance_type=known_type,
                instance_count=est.instance_count, gpus_per_host=gpus,
            ))
    if plan is not None and plan.smp is not None and est.planned_model and valid("planned_model") and instance_type:
        problems.check(lambda: _memory(est, plan, instance_type))
    if plan is not None and valid("hyperparameters") and est.user_hyperparameters \
            and len(est.user_hyperparameters) + len(plan.hyperparameters) + 5 > 100:
        problems.add(SagelaunchError("hyperparameters: too many entries with the distribution settings; allowed: 100 in all",
                                     field="hyperparameters", value=len(est.user_hyperparameters), allowed="100 in all",
                                     fix="drop some hyperparameters"))
    if not problems.problems and not invalid:
        assert image is not None and plan is not None and info is not None and region is not None
        assert instance_type is not None  # an image was found for it
        version, py, uri, repository = image
        problems.resolved = Resolved(version, py, uri, region, _gpus_per_host(info), plan, profiler,
                                     repository, instance_type)
    return problems


def _memory(est: EstimatorArguments, plan: DistributionPlan, instance_type: str) -> None:
    """planned_model given: the SMP layout's model states must fit the GPUs (sagelaunch.planner)."""
    assert plan.smp is not None and est.planned_model is not None
    check_smp_memory(est.planned_model, plan.smp, instance_type, est.instance_count)


def _gpus_per_host(info: InstanceType) -> int:
    """The catalog's GPU count; "local_gpu" has as many as this machine shows (the launcher's probe)."""
    return local_gpu_count() if info.gpus_from_machine else info.gpus


def _check_image_processor(image: str, info: InstanceType) -> None:
    instance_type, kind = info.name, info.kind
    tag = image.rsplit(":", 1)[-1] if ":" in image.rsplit("/", 1)[-1] else ""
    if kind == "gpu" and "-cpu" in tag:
        raise SagelaunchError(
            f"image_uri={image!r} is a CPU image but instance_type={instance_type!r} has GPUs; "
            "use the -gpu- tag of the image or a CPU instance type", field="image_uri", value=image,
            allowed="a -gpu- image for a GPU instance type", fix="use the -gpu- tag of the image or a CPU instance type")
    if kind == "cpu" and "-gpu" in tag and not info.is_local:
        raise SagelaunchError(
            f"image_uri={image!r} is a GPU image but instance_type={instance_type!r} has no GPU; "
            "use the -gpu- tag or a GPU instance type such as ml.g5.xlarge", field="image_uri", value=image,
            allowed="a CPU image for a CPU instance type", fix="use the -gpu- tag or a GPU instance type such as ml.g5.xlarge")
