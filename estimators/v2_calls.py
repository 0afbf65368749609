"""The SageMaker SDK v2 calls on an estimator beyond fit: hyperparameters(), model_data, logs(), attach()'s
constructor arguments, and the profiler updates of a running job (enable_default_profiling, update_profiler,
disable_profiling). Each takes what it reads (the job, a value, the estimator's class as its arguments record);
what the estimator keeps of a job (fit's and attach's state) is the estimator's own (base.py).

Each does what v2's `sagemaker.estimator` does, on our job handles (`sagelaunch.launcher.common.jobs.TrainingJob`), so it works
for local and SageMaker jobs alike; where a local job cannot do what SageMaker does (UpdateTrainingJob), the
error says so and what to do instead.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import TYPE_CHECKING, Any, cast

from sagelaunch.jobspec.catalog import FRAMEWORK_CLASS_NAMES
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.fields import RESERVED_HYPERPARAMETERS
from sagelaunch.jobspec.names import base_from_name
from sagelaunch.launcher import SAGEMAKER_PREFIX, decode_hyperparameters, rule_configuration
from sagelaunch.profiler_config.config import ProfilerConfig, check_s3_uri
from sagelaunch.profiler_config.debugger import ProfilerRule

if TYPE_CHECKING:
    from sagelaunch.estimators.arguments import EstimatorArguments
    from sagelaunch.launcher import SageMakerTrainingJob, TrainingJob

_TAG_VERSION = re.compile(r":(\d+\.\d+(?:\.\d+)?)-")
_TAG_PY = re.compile(r"-(py\d+)")
_HF_TAG = re.compile(r"huggingface-pytorch-training[^:]*:([0-9.]+)-transformers([0-9.]+)-(?:cpu|gpu)-(py\d+)")
_ARN_REGION = re.compile(r"^arn:[\w-]+:sagemaker:([a-z0-9-]+):")


# ------------------------------------------------------------------ hyperparameters(), model_data, logs()
# latest_job_*_artifacts_path: the request section whose S3OutputPath holds the artifacts, and their folder
ARTIFACT_FOLDERS = {"profiler": ("ProfilerConfig", "profiler-output"), "debugger": ("DebugHookConfig", "debug-output"),
                    "tensorboard": ("TensorBoardOutputConfig", "tensorboard-output")}


def artifacts_path(job: TrainingJob | None, kind: str) -> str | None:
    """v2's latest_job_<kind>_artifacts_path(): <S3OutputPath>/<job>/<folder> of the last SageMaker job (None when
    it has no such output), from the request it was sent (an attached job: its description)."""
    if job is None:
        raise SagelaunchError(f"latest_job_{kind}_artifacts_path() needs a training job: call fit() or attach() first",
                              field="latest_training_job", value=None, allowed="a training job",
                              fix="call fit() or attach() first")
    if getattr(job, "backend", None) != "sagemaker":
        fix = f"read them with `sagelaunch jobs describe {job.name}` (profiles: `sagelaunch profile analyze`)"
        raise SagelaunchError(f"latest_job_{kind}_artifacts_path(): {job.name} is a local job, whose artifacts stay on "
                              f"this machine; {fix}", field="latest_training_job", value=job.name,
                              allowed="a SageMaker job", fix=fix)
    section, folder = ARTIFACT_FOLDERS[kind]
    sent = cast("SageMakerTrainingJob", job).request  # a SageMaker job (checked above)
    config = (sent or job.describe()).get(section) or {}
    if not config.get("S3OutputPath") or config.get("DisableProfiler"):
        return None
    return posixpath.join(config["S3OutputPath"], job.name, folder)


def encoded_hyperparameters(values: dict[str, Any], job: TrainingJob | None) -> dict[str, str]:
    """v2's `hyperparameters()`: each value (the user's and the distribution's entries) JSON-encoded, over what
    the latest job was sent (its sagemaker_* entries) once there is one."""
    current = {str(key): json.dumps(value) for key, value in values.items()}
    return {**(job.hyperparameters if job is not None else {}), **current}


def model_data(job: TrainingJob) -> str | dict[str, Any] | None:
    """v2's `model_data`: the job's S3ModelArtifacts; for an uncompressed output (CompressionType NONE) the
    S3DataSource dict v2 gives, whose prefix ends in "/"."""
    description = job.describe()
    uri = (description.get("ModelArtifacts") or {}).get("S3ModelArtifacts")
    compression = (description.get("OutputDataConfig") or {}).get("CompressionType", "GZIP")
    if uri is None or compression == "GZIP":
        return uri
    if compression != "NONE":
        raise SagelaunchError(f"training job {job.name}: OutputDataConfig.CompressionType={compression!r} is not "
                              "known; allowed: 'GZIP', 'NONE'", field="OutputDataConfig.CompressionType",
                              value=compression, allowed="GZIP, NONE", fix="the job's record is not one SageMaker wrote")
    return {"S3DataSource": {"S3Uri": uri if uri.endswith("/") else uri + "/", "S3DataType": "S3Prefix",
                             "CompressionType": "None"}}


# ------------------------------------------------------------------ attach()
def session_region(session: Any) -> str | None:
    """The region of a sagemaker.Session (boto_region_name) or a boto3.Session (region_name)."""
    if session is None:
        return None
    return getattr(session, "boto_region_name", None) or getattr(session, "region_name", None)


def init_params(cls: type[EstimatorArguments], description: dict[str, Any],
                model_channel_name: str | None = "model", sagemaker_session: Any = None) -> dict[str, Any]:
    """v2's `_prepare_init_params_from_job_description` (EstimatorBase, Framework, PyTorch/TensorFlow): the
    constructor arguments of a job's estimator. The `distribution=` dict is not rebuilt (v2 does not either);
    its hyperparameters stay in what the job was sent, which hyperparameters() returns."""
    name = description["TrainingJobName"]
    resources = description["ResourceConfig"]
    algorithm = description["AlgorithmSpecification"]
    output = description.get("OutputDataConfig") or {}
    stopping = description.get("StoppingCondition") or {}
    vpc = description.get("VpcConfig") or {}
    hyperparameters = decode_hyperparameters(description.get("HyperParameters") or {})
    params: dict[str, Any] = {
        "role": description.get("RoleArn"),
        "instance_count": resources["InstanceCount"],
        "instance_type": resources["InstanceType"],
        "volume_size": resources.get("VolumeSizeInGB"),
        "volume_kms_key": resources.get("VolumeKmsKeyId"),
        "keep_alive_period_in_seconds": resources.get("KeepAlivePeriodInSeconds"),
        "max_run": stopping.get("MaxRuntimeInSeconds"),
        "input_mode": algorithm.get("TrainingInputMode"),
        "container_entry_point": algorithm.get("ContainerEntrypoint"),
        "container_arguments": algorithm.get("ContainerArguments"),
        "base_job_name": base_from_name(name),
        "output_path": output.get("S3OutputPath"),
        "output_kms_key": output.get("KmsKeyId"),
        "enable_network_isolation": description.get("EnableNetworkIsolation"),
        "encrypt_inter_container_traffic": description.get("EnableInterContainerTrafficEncryption"),
        "subnets": vpc.get("Subnets"),
        "security_group_ids": vpc.get("SecurityGroupIds"),
        "region": _region_of(description),
    }
    if cls.framework != "generic":  # v2's Framework reads its script back; its generic EstimatorBase does not
        params.update(entry_point=hyperparameters.get("sagemaker_program"),
                      source_dir=hyperparameters.get("sagemaker_submit_directory"),
                      container_log_level=hyperparameters.get("sagemaker_container_log_level"))
    if description.get("EnableManagedSpotTraining"):
        params["use_spot_instances"] = True
        params["max_wait"] = stopping.get("MaxWaitTimeInSeconds")
    if description.get("RetryStrategy"):
        params["max_retry_attempts"] = description["RetryStrategy"].get("MaximumRetryAttempts")
        params["max_wait"] = stopping.get("MaxWaitTimeInSeconds") or params.get("max_wait")
    for channel in description.get("InputDataConfig") or ():
        if model_channel_name and channel["ChannelName"] == model_channel_name:
            params["model_channel_name"] = model_channel_name
            params["model_uri"] = channel["DataSource"].get("S3DataSource", {}).get("S3Uri")
    user = {k: v for k, v in hyperparameters.items()
            if k not in RESERVED_HYPERPARAMETERS and not k.startswith(SAGEMAKER_PREFIX) and k != "mp_parameters"}
    if cls.framework == "generic":  # v2's EstimatorBase: the hyperparameters as the job holds them, undecoded;
        # the names only sagelaunch sets (a script-mode job's sagemaker_program…) come back through hyperparameters()
        user = {k: v for k, v in (description.get("HyperParameters") or {}).items()
                if k not in RESERVED_HYPERPARAMETERS and k != "mp_parameters"}
    if cls.framework == "tensorflow" and "model_dir" in user:  # v2 gives it back as the model_dir argument
        params["model_dir"] = user.pop("model_dir")
    params["hyperparameters"] = user
    params["sagemaker_session"] = sagemaker_session  # kept where the estimator takes one
    params.update(_image_params(cls, name, algorithm.get("TrainingImage") or ""))
    # arguments this estimator does not take (yet) are left out; None and "" (AWS: no KMS key) mean the default
    accepted = set(cls.argument_names())
    return {k: v for k, v in params.items() if v is not None and v != "" and k in accepted}


def _region_of(description: dict[str, Any]) -> str | None:
    match = _ARN_REGION.match(description.get("TrainingJobArn") or "")
    return match.group(1) if match else None


def _image_params(cls: type[EstimatorArguments], job_name: str, image: str) -> dict[str, Any]:
    """framework_version and py_version from a DLC image's tag (as v2); the image itself when its tag says
    neither. A job of the other framework is refused, as v2 refuses it."""
    if cls.framework == "generic":  # any image: the generic estimator runs it as given
        return {"image_uri": image}
    hugging_face = _HF_TAG.search(image)
    if "transformers_version" in cls.argument_names() and hugging_face:  # v2's HuggingFace: the versions, not the image
        return {"pytorch_version": hugging_face.group(1), "transformers_version": hugging_face.group(2),
                "py_version": hugging_face.group(3)}
    repository = image.rsplit("/", 1)[-1].split(":")[0].split("@")[0]
    framework = repository.split("-")[0]
    if framework in ("pytorch", "tensorflow") and framework != cls.framework:
        other = FRAMEWORK_CLASS_NAMES[framework]
        raise SagelaunchError(f"training job {job_name} ran the {framework} image {image}, not a {cls.framework} one; "
                              f"attach it with {other}.attach({job_name!r})", field="training_job_name", value=job_name,
                              allowed=f"a {cls.framework} job", fix=f"attach it with {other}.attach({job_name!r})")
    version, py = _TAG_VERSION.search(image), _TAG_PY.search(image)
    if framework != cls.framework or version is None:
        return {"image_uri": image}
    return {"framework_version": version.group(1), "py_version": py.group(1) if py else None, "image_uri": image}


# ------------------------------------------------------------------ profiler updates (UpdateTrainingJob)
def _update(job: TrainingJob, what: str, **params: Any) -> None:
    if job.backend != "sagemaker":
        fix = "set profiler_config=ProfilerConfig(...) (or disable_profiler=True) on the estimator before fit()"
        raise SagelaunchError(
            f"{what} changes a running SageMaker job's profiler (UpdateTrainingJob); the local job {job.name} "
            f"reads its profiler settings once, when it starts. Fix: {fix}", field="latest_training_job",
            value=job.name, allowed="a running SageMaker job", fix=fix)
    cast("SageMakerTrainingJob", job).update(**params)  # a SageMaker job (checked above)


def enable_default_profiling(output_path: str | None, job: TrainingJob) -> None:
    """v2: the default monitoring ProfilerConfig (S3OutputPath: the job's profiler output, else its output
    path), for a job started with profiling disabled."""
    if job.backend != "sagemaker":
        _update(job, "enable_default_profiling()")
    description = job.describe()
    if description.get("ProfilingStatus") == "Enabled":
        raise SagelaunchError("enable_default_profiling(): Debugger monitoring is already enabled for training job "
                              f"{job.name}; change its settings with update_profiler(...)", field="ProfilerConfig",
                              value=job.name, allowed="a job without monitoring",
                              fix="change its settings with update_profiler(...)")
    s3_output_path = ((description.get("ProfilerConfig") or {}).get("S3OutputPath") or output_path
                      or (description.get("OutputDataConfig") or {}).get("S3OutputPath"))
    config: dict[str, Any] = {"S3OutputPath": s3_output_path} if s3_output_path else {}
    config["DisableProfiler"] = False
    _update(job, "enable_default_profiling()", ProfilerConfig=config)


def update_profiler(job: TrainingJob, rules: Any, system_monitor_interval_millis: int | None,
                    s3_output_path: str | None, framework_profile_params: Any, disable_framework_metrics: bool) -> None:
    """v2's update_profiler: ProfilerConfig from the arguments given (and ProfilerRuleConfigurations for
    `rules`); ProfilingParameters {} when disable_framework_metrics=True."""
    if not (rules or system_monitor_interval_millis or s3_output_path or framework_profile_params
            or disable_framework_metrics):
        allowed = ("rules, system_monitor_interval_millis, s3_output_path, framework_profile_params or "
                   "disable_framework_metrics=True")
        raise SagelaunchError(f"update_profiler() needs something to change: {allowed}", field="update_profiler",
                              value=None, allowed=allowed, fix="pass one of them")
    if disable_framework_metrics and framework_profile_params:
        raise SagelaunchError("update_profiler(): framework_profile_params cannot be set with "
                              "disable_framework_metrics=True; give one of them", field="framework_profile_params",
                              value=framework_profile_params, allowed="unset with disable_framework_metrics=True",
                              fix="give one of them")
    if system_monitor_interval_millis is not None:  # the same allowed values as ProfilerConfig
        ProfilerConfig(system_monitor_interval_millis=system_monitor_interval_millis)
    config: dict[str, Any] = {}
    if s3_output_path is not None:
        config["S3OutputPath"] = check_s3_uri("s3_output_path", s3_output_path)
    config["DisableProfiler"] = False
    if system_monitor_interval_millis is not None:
        config["ProfilingIntervalInMilliseconds"] = system_monitor_interval_millis
    if disable_framework_metrics:
        config["ProfilingParameters"] = {}
    elif framework_profile_params is not None:
        config["ProfilingParameters"] = _profiling_parameters(framework_profile_params)
    params: dict[str, Any] = {"ProfilerConfig": config}
    if rules:
        region = getattr(job, "region", None) or ""  # a local job has none: _update refuses it below
        params["ProfilerRuleConfigurations"] = [_rule_config(rule, region) for rule in rules]
    _update(job, "update_profiler()", **params)


def disable_profiling(job: TrainingJob) -> None:
    """v2: ProfilerConfig {DisableProfiler: true}; refused when the job's profiling is already disabled."""
    if job.backend != "sagemaker":
        _update(job, "disable_profiling()")
    if job.describe().get("ProfilingStatus") == "Disabled":
        raise SagelaunchError(f"disable_profiling(): profiling is already disabled for training job {job.name}",
                              field="ProfilerConfig.DisableProfiler", value=True, allowed="a job with profiling on",
                              fix="nothing to do")
    _update(job, "disable_profiling()", ProfilerConfig={"DisableProfiler": True})


def _profiling_parameters(params: Any) -> dict[str, str]:
    """framework_profile_params: v2's FrameworkProfile (its `profiling_parameters`), a Profiler, or a dict."""
    if isinstance(params, dict):
        return {str(k): str(v) for k, v in params.items()}
    for attribute in ("profiling_parameters", "to_request_dict"):
        value = getattr(params, attribute, None)
        if value is not None:
            return dict(value() if callable(value) else value)
    allowed = "FrameworkProfile(...), Profiler(...) or a ProfilingParameters dict"
    raise SagelaunchError(f"framework_profile_params={params!r} is not a FrameworkProfile; allowed: {allowed}",
                          field="framework_profile_params", value=params, allowed=allowed, fix="pass one of them")


def _rule_config(rule: Any, region: str) -> dict[str, Any]:
    """A ProfilerRule as v2's update_profiler sends it: a built-in rule on the region's evaluator image."""
    if isinstance(rule, dict):
        return rule
    if isinstance(rule, ProfilerRule):
        return rule_configuration(rule.to_settings(region))
    to_dict = getattr(rule, "to_profiler_rule_config_dict", None)  # a v2 ProfilerRule, where v2 is installed
    if to_dict is None:
        allowed = ("ProfilerRule objects (ProfilerRule.sagemaker(rule_configs.ProfilerReport())) or "
                   "ProfilerRuleConfigurations dicts")
        raise SagelaunchError(f"update_profiler(rules=[{rule!r}]): not a ProfilerRule; allowed: {allowed}",
                              field="rules", value=rule, allowed=allowed,
                              fix="e.g. ProfilerRule.sagemaker(rule_configs.ProfilerReport())")
    return to_dict()
