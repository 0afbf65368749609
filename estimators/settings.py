"""The SDK v2 job settings beyond code, image and distribution: their cross-field and local-job rules,
their values in the TrainingJobSpec, and how a `sagemaker_session=` is used when a job is submitted.

Local jobs (instance_type 'local'/'local_gpu') implement what has a meaning here — dependencies and
git_config code ship into each host's code folder, model_uri becomes the model channel, FastFile reads
like File, metric definitions and SageMaker metrics are accepted (nothing reads them locally) — and
refuse, naming the setting, what only SageMaker's infrastructure does (LOCAL_REFUSED).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sagelaunch.estimators.inputs import TrainingInput, to_channels
from sagelaunch.estimators.session import session_parts
from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.spec import InstanceGroupSpec, replace
from sagelaunch.launcher import using_session

if TYPE_CHECKING:
    from sagelaunch.estimators.arguments import EstimatorArguments
    from sagelaunch.jobspec.spec import TrainingJobSpec

# a setting a local job cannot honour → why (checked when it is not at its default)
LOCAL_REFUSED = {
    "keep_alive_period_in_seconds": "warm pools keep SageMaker instances between jobs; a local job has none",
    "max_retry_attempts": "SageMaker retries a job after its own internal errors; a local job is not retried",
    "code_location": "a local job's code is copied into its job folder, not uploaded",
    "container_entry_point": "a local job runs the training toolkit's torchrun/python launch, not a container",
    "container_arguments": "a local job runs the training toolkit's torchrun/python launch, not a container",
    "disable_output_compression": "a local job always writes model.tar.gz and output.tar.gz",
    "instance_groups": "a heterogeneous cluster runs on SageMaker only",
}
# the SDK v2 turns SageMaker metrics on from these versions (PyTorch/TensorFlow estimators)
METRICS_FROM = {"pytorch": (1, 3), "tensorflow": (1, 15)}
MODEL_CONTENT_TYPE = "application/x-sagemaker-model"
_GPU_FAMILY = re.compile(r"^ml[._]([a-z\d\-]+)\.?\w*$")


def training_instance_type(est: EstimatorArguments) -> str | None:
    """instance_type, or with instance_groups the one v2 picks the image for: the first GPU (g*/p*) group's,
    else the first group's."""
    if est.instance_type is not None or not est.instance_groups:
        return est.instance_type
    for group in est.instance_groups:
        match = _GPU_FAMILY.match(group.instance_type)
        if match and match[1][0] in ("g", "p"):
            return group.instance_type
    return est.instance_groups[0].instance_type


def settings_problems(est: EstimatorArguments, local: bool, valid: Any) -> list[str]:
    """Every cross-field problem of these settings (each message names its field and a fix)."""
    problems = []
    if valid("instance_type", "instance_groups"):
        if est.instance_type is None and not est.instance_groups:
            problems.append("instance_type is required (or instance_groups for a heterogeneous cluster); "
                            "e.g. instance_type='ml.g5.xlarge', or 'local' to run here")
        if est.instance_type is not None and est.instance_groups:
            problems.append(f"instance_type={est.instance_type!r} and instance_groups are both set; SageMaker takes "
                            "one of them — drop instance_type (each InstanceGroup names its own)")
    if est.instance_groups:
        if "instance_count" in est.model_fields_set:
            problems.append(f"instance_count={est.instance_count} is set with instance_groups; each InstanceGroup "
                            "has its own instance_count — drop instance_count")
        names = [g.instance_group_name for g in est.instance_groups]
        if len(set(names)) != len(names):
            problems.append(f"instance_groups: group names {names} repeat; give each group its own name")
        if est.distribution:
            problems.append("distribution with instance_groups is not supported by sagelaunch; run a homogeneous "
                            "cluster (instance_type + instance_count) for distributed training")
    if local:
        for field, why in LOCAL_REFUSED.items():
            value = getattr(est, field)
            if value is not None and value is not False:
                problems.append(f"{field}={value!r} is not available in local jobs: {why}; drop it for a local run, "
                                "or run on SageMaker (an ml.* instance_type)")
        if est.input_mode == "Pipe":
            problems.append("input_mode='Pipe' is not available in local jobs; use 'File' or 'FastFile' "
                            "(the script reads the same files)")
    source_in_s3 = bool(est.source_dir and est.source_dir.startswith("s3://"))
    if source_in_s3 and est.dependencies:
        problems.append(f"dependencies with source_dir={est.source_dir!r}: an S3 code archive is used as it is, "
                        "so the dependencies would not ship; put them into that archive, or use a local source_dir")
    if source_in_s3 and est.git_config is not None:
        problems.append("git_config with an s3:// source_dir: give source_dir as a folder of the repository")
    if est.model_uri is not None and not local and not est.model_uri.startswith("s3://"):
        problems.append(f"model_uri={est.model_uri!r}: a SageMaker job reads its model from S3; upload it and "
                        "pass s3://…/model.tar.gz, or run with instance_type='local'")
    if est.sagemaker_session is not None and valid("sagemaker_session", "region"):
        region = session_parts(est.sagemaker_session).region
        if est.region is not None and est.region != region:
            problems.append(f"region={est.region!r} differs from the sagemaker_session's region {region!r}; "
                            "drop region (the session's is used) or make a session in that region")
    return problems


def _metrics_default(est: EstimatorArguments) -> bool | None:
    if "enable_sagemaker_metrics" in est.model_fields_set:
        return est.enable_sagemaker_metrics  # given, even as None (v2 then leaves it out)
    if not est.framework_version:
        return None
    parts = tuple(int(p) for p in est.framework_version.split(".")[:2])
    return True if parts >= METRICS_FROM[est.framework] else None


def job_settings(est: EstimatorArguments, inputs: Any, local: bool) -> dict[str, Any]:
    """The spec fields these settings fill, each named as its part's field (jobspec.spec.PART_OF); inputs included:
    model_uri adds the model channel."""
    channels = list(to_channels(inputs, local=local, input_mode=est.input_mode))
    if est.model_uri is not None:
        if any(c.name == est.model_channel_name for c in channels):
            raise SagelaunchError(f"inputs[{est.model_channel_name!r}] and model_uri both make the channel "
                                  f"{est.model_channel_name!r}; rename one (model_channel_name=…)",
                                  field="model_channel_name", value=est.model_channel_name,
                                  allowed="a channel name the inputs do not use", fix="rename one (model_channel_name=…)")
        model = TrainingInput(est.model_uri, content_type=MODEL_CONTENT_TYPE, input_mode="File")
        channels.append(model.to_channel(est.model_channel_name))
    groups = [g.instance_group_name for g in est.instance_groups or ()]
    for c in channels:
        unknown = sorted(set(c.instance_groups or ()) - set(groups))
        if unknown:
            raise SagelaunchError(f"inputs[{c.name!r}]: instance_groups {unknown} are not among the estimator's "
                                  f"instance_groups {groups}; name groups you defined",
                                  field=f"inputs[{c.name!r}].instance_groups", value=unknown, allowed=", ".join(groups),
                                  fix="name groups you defined")
    mode = est.input_mode
    if isinstance(inputs, TrainingInput) and inputs.input_mode is not None:
        mode = inputs.input_mode  # as v2: a lone TrainingInput's mode is the job's
    return dict(
        inputs=tuple(channels), input_mode=mode,
        metric_definitions=tuple((m["Name"], m["Regex"]) for m in est.metric_definitions)
        if est.metric_definitions is not None else None,
        enable_sagemaker_metrics=_metrics_default(est),
        keep_alive_period_in_seconds=est.keep_alive_period_in_seconds, max_retry_attempts=est.max_retry_attempts,
        instance_groups=tuple(InstanceGroupSpec(name=g.instance_group_name, instance_type=g.instance_type,
                                                instance_count=g.instance_count) for g in est.instance_groups or ()),
        container_entry_point=tuple(est.container_entry_point) if est.container_entry_point is not None else None,
        container_arguments=tuple(est.container_arguments) if est.container_arguments is not None else None,
        disable_output_compression=est.disable_output_compression, code_location=est.code_location,
    )


@dataclass
class SessionUse:
    """How fit() uses a sagemaker_session: its boto3 Session for every AWS call (`scope`), its default bucket
    (and prefix) for the output and the code of SageMaker jobs (`apply`)."""

    parts: Any
    scope: Any
    local: bool

    @classmethod
    def of(cls, session: Any, instance_type: str) -> "SessionUse":
        parts = session_parts(session)
        return cls(parts, using_session(parts.boto_session), is_local(instance_type))

    def apply(self, spec: TrainingJobSpec, options: dict[str, Any]) -> TrainingJobSpec:
        """The spec with the session's bucket as v2 uses it; sets options['bucket'] for the SageMaker backend."""
        if self.local or self.parts.default_bucket is None or "bucket" in options:
            return spec
        bucket = options["bucket"] = self.parts.default_bucket()
        prefix = self.parts.bucket_prefix
        if prefix and spec.output.output_path is None:  # v2: output and code under the session's prefix
            spec = replace(spec, output_path=f"s3://{bucket}/{prefix}/",
                           code_location=spec.code.code_location or f"s3://{bucket}/{prefix}")
        return spec
