"""TrainingJobSpec → the complete CreateTrainingJob request (pure: no network, no files).

Hyperparameter values are JSON-encoded as the SageMaker SDK sends them. Where the code lives:
`spec.code.submit_directory` once a backend uploaded it; an s3:// source_dir as given; else
s3://<bucket>/<job>/source/sourcedir.tar.gz (`code_uri`, which the SageMaker backend uploads to):
the bucket of an s3:// output_path, or the SDK's default bucket `sagemaker-<region>-<account>`
(the account is a placeholder until the SageMaker backend passes the real one).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sagelaunch.jobspec import names
from sagelaunch.jobspec.profiling import profiling_parameters
from sagelaunch.jobspec.s3uri import default_bucket_name, parse_s3_uri

if TYPE_CHECKING:
    from sagelaunch.jobspec.spec import TrainingJobSpec

# What CreateTrainingJob takes (botocore's shape): both backends consume this one compiled form.
CreateTrainingJobRequest = dict[str, Any]

PLACEHOLDER_ACCOUNT = "000000000000"
PLACEHOLDER_ROLE = f"arn:aws:iam::{PLACEHOLDER_ACCOUNT}:role/SageMakerRole"  # local jobs need no role


def default_bucket(region: str, account: str | None = None) -> str:
    return default_bucket_name(region, account or PLACEHOLDER_ACCOUNT)


def role_arn(role: str | None, account: str | None = None) -> str:
    """The request's RoleArn: a placeholder for local jobs (no role); the SageMaker backend passes the account."""
    if not role:
        return PLACEHOLDER_ROLE
    return names.role_arn(role, account or PLACEHOLDER_ACCOUNT)


def code_bucket(spec: "TrainingJobSpec", account: str | None = None) -> str:
    """The bucket for the code archive when no `bucket=` (the SDK's code_location) is given: as the
    SageMaker SDK does, the bucket of an s3:// output_path, else `sagemaker-<region>-<account>`."""
    if spec.output.output_path and spec.output.output_path.startswith("s3://"):
        return parse_s3_uri(spec.output.output_path)[0]
    return default_bucket(spec.region, account)


def code_uri(spec: "TrainingJobSpec", account: str | None = None, bucket: str | None = None) -> str:
    """Where the job's code is: the one rule the dry run (`validate --request`) and the upload share."""
    if spec.code.submit_directory:
        return spec.code.submit_directory
    if spec.code.source_dir and spec.code.source_dir.startswith("s3://"):
        return spec.code.source_dir
    if spec.code.code_location:  # the SDK's code_location: s3://bucket[/prefix] → <prefix>/<job>/source/…
        located, prefix = parse_s3_uri(spec.code.code_location)
        prefix = prefix.strip("/")
        return f"s3://{located}/{prefix + '/' if prefix else ''}{spec.job_name}/source/sourcedir.tar.gz"
    return f"s3://{bucket or code_bucket(spec, account)}/{spec.job_name}/source/sourcedir.tar.gz"


def output_uri(spec: "TrainingJobSpec", account: str | None = None) -> str:
    if spec.output.output_path:
        return spec.output.output_path
    return f"s3://{default_bucket(spec.region, account)}/"


def hyperparameters(spec: "TrainingJobSpec", account: str | None = None) -> dict[str, str]:
    user = {str(k): str(v) for k, v in spec.code.hyperparameters.items()} if spec.code.hyperparameters_as_text else {}
    if not spec.code.ships_code:  # v2's generic Estimator of an image that runs its own program
        return user or encode_hyperparameters(spec.code.hyperparameters)
    hp: dict[str, Any] = {} if user else dict(spec.code.hyperparameters)
    hp.update(
        sagemaker_program=spec.code.entry_point,
        sagemaker_submit_directory=code_uri(spec, account),
        sagemaker_region=spec.region,
        sagemaker_job_name=spec.job_name,
        sagemaker_container_log_level=spec.code.container_log_level,
    )
    hp.update(spec.code.distribution.hyperparameters(spec.compute.instance_type, spec.compute.processes_per_host))
    if spec.code.model_dir is not None:
        hp["model_dir"] = spec.code.model_dir
    elif spec.code.default_model_dir:  # SDK v2's TensorFlow default; MPI jobs keep the model in the container
        mpi = spec.code.distribution.mpi_enabled
        hp["model_dir"] = "/opt/ml/model" if mpi else f"{output_uri(spec, account).rstrip('/')}/{spec.job_name}/model"
    return {**user, **encode_hyperparameters(hp)}


def encode_hyperparameters(values: dict[str, Any]) -> dict[str, str]:
    """HyperParameters (and so hyperparameters.json) hold JSON-encoded strings, as the SageMaker SDK sends them."""
    return {str(key): json.dumps(value) for key, value in values.items()}


def channel_request(c: Any) -> dict[str, Any]:
    """One InputDataConfig entry, with exactly the keys the SDK v2's TrainingInput.config holds."""
    source: dict[str, Any] = {"S3DataType": c.s3_data_type, "S3Uri": c.uri}
    if c.distribution is not None:
        source["S3DataDistributionType"] = c.distribution
    optional_source = {"InstanceGroupNames": c.instance_groups, "AttributeNames": c.attribute_names,
                       "HubAccessConfig": c.hub_access_config, "ModelAccessConfig": c.model_access_config}
    source.update({k: list(v) if isinstance(v, tuple) else v for k, v in optional_source.items() if v is not None})
    ch: dict[str, Any] = {"ChannelName": c.name, "DataSource": {"S3DataSource": source}}
    optional = {"CompressionType": c.compression, "ContentType": c.content_type, "RecordWrapperType": c.record_wrapping,
                "InputMode": c.input_mode if c.mode_given else None, "TargetAttributeName": c.target_attribute_name,
                "ShuffleConfig": {"Seed": c.shuffle_seed} if c.shuffle_seed is not None else None}
    ch.update({k: v for k, v in optional.items() if v is not None})
    return ch


def rule_configuration(r: Any) -> dict[str, Any]:
    """A Debugger/Profiler rule as v2 sends it: the optional keys only when set."""
    rule: dict[str, Any] = {"RuleConfigurationName": r.name, "RuleEvaluatorImage": r.image_uri}
    for key, value in (("InstanceType", r.instance_type), ("VolumeSizeInGB", r.volume_size_in_gb),
                       ("LocalPath", r.local_path), ("S3OutputPath", r.s3_output_path),
                       ("RuleParameters", dict(r.parameters))):
        if value:
            rule[key] = value
    return rule


def resource_config(spec: "TrainingJobSpec") -> dict[str, Any]:
    config: dict[str, Any] = {"VolumeSizeInGB": spec.compute.volume_size}
    if spec.compute.instance_groups:
        config["InstanceGroups"] = [{"InstanceGroupName": g.name, "InstanceType": g.instance_type,
                                     "InstanceCount": g.instance_count} for g in spec.compute.instance_groups]
    else:
        config.update(InstanceType=spec.compute.instance_type, InstanceCount=spec.compute.instance_count)
    if spec.compute.volume_kms_key:
        config["VolumeKmsKeyId"] = spec.compute.volume_kms_key
    if spec.compute.keep_alive_period_in_seconds is not None:
        config["KeepAlivePeriodInSeconds"] = spec.compute.keep_alive_period_in_seconds
    return config


def algorithm_specification(spec: "TrainingJobSpec") -> dict[str, Any]:
    algo: dict[str, Any] = {"TrainingImage": spec.image_uri, "TrainingInputMode": spec.code.input_mode}
    if spec.code.container_entry_point is not None:
        algo["ContainerEntrypoint"] = list(spec.code.container_entry_point)
    if spec.code.container_arguments is not None:
        algo["ContainerArguments"] = list(spec.code.container_arguments)
    if spec.code.metric_definitions is not None:
        algo["MetricDefinitions"] = [{"Name": n, "Regex": r} for n, r in spec.code.metric_definitions]
    if spec.code.enable_sagemaker_metrics is not None:
        algo["EnableSageMakerMetricsTimeSeries"] = spec.code.enable_sagemaker_metrics
    return algo


def profiler_request(spec: "TrainingJobSpec", account: str | None = None) -> dict[str, Any]:
    """ProfilerConfig plus ProfilerRuleConfigurations; {} without a profiler.

    Monitoring only (v2's default) sends the S3 path and the interval; ProfilingParameters go with SageMaker
    Profiler's detailed capture (its processing rule is one of `spec.observability.profiler_rules`) or Debugger's
    framework profiling."""
    p = spec.observability.profiler
    if p is None:
        return {}
    config: dict[str, Any] = {"DisableProfiler": p.disable_profiler}
    if not p.disable_profiler:
        config["S3OutputPath"] = p.s3_output_path or output_uri(spec, account)
    if p.system_monitor_interval_millis is not None:
        config["ProfilingIntervalInMilliseconds"] = p.system_monitor_interval_millis
    if p.framework_profile_parameters is not None:
        config["ProfilingParameters"] = dict(p.framework_profile_parameters)
    elif p.detailed:
        config["ProfilingParameters"] = profiling_parameters(p.cpu_profiling_duration, p.file_rotation_interval)
    out: dict[str, Any] = {"ProfilerConfig": config}
    if spec.observability.profiler_rules:
        out["ProfilerRuleConfigurations"] = [rule_configuration(r) for r in spec.observability.profiler_rules]
    return out


def debugger_request(spec: "TrainingJobSpec", account: str | None = None) -> dict[str, Any]:
    """DebugHookConfig, DebugRuleConfigurations and TensorBoardOutputConfig, each only when the job has it."""
    out: dict[str, Any] = {}
    hook = spec.observability.debug_hook
    if hook is not None:
        config: dict[str, Any] = {"S3OutputPath": hook.s3_output_path or output_uri(spec, account)}
        if hook.local_path is not None:
            config["LocalPath"] = hook.local_path
        if hook.hook_parameters is not None:
            config["HookParameters"] = dict(hook.hook_parameters)
        config["CollectionConfigurations"] = [
            {"CollectionName": c.name, **({"CollectionParameters": dict(c.parameters)} if c.parameters is not None else {})}
            for c in hook.collections]
        out["DebugHookConfig"] = config
    if spec.observability.debug_rules:
        out["DebugRuleConfigurations"] = [rule_configuration(r) for r in spec.observability.debug_rules]
    if spec.observability.tensorboard_output is not None:
        tb = spec.observability.tensorboard_output
        out["TensorBoardOutputConfig"] = {"S3OutputPath": tb.s3_output_path,
                                          **({"LocalPath": tb.local_path} if tb.local_path is not None else {})}
    return out


def code_request(spec: "TrainingJobSpec", account: str | None = None) -> dict[str, Any]:
    """The code part: what runs (AlgorithmSpecification) and what it is told (HyperParameters)."""
    values = hyperparameters(spec, account)
    return {"AlgorithmSpecification": algorithm_specification(spec), **({"HyperParameters": values} if values else {})}


def output_request(spec: "TrainingJobSpec", account: str | None = None) -> dict[str, Any]:
    """The output part: OutputDataConfig, and CheckpointConfig when checkpoints sync with S3."""
    output: dict[str, Any] = {"S3OutputPath": output_uri(spec, account)}
    if spec.output.output_kms_key:
        output["KmsKeyId"] = spec.output.output_kms_key
    if spec.output.disable_output_compression:
        output["CompressionType"] = "NONE"
    out: dict[str, Any] = {"OutputDataConfig": output}
    if spec.output.checkpoint_s3_uri:
        out["CheckpointConfig"] = {"S3Uri": spec.output.checkpoint_s3_uri}
        if spec.output.checkpoint_local_path:
            out["CheckpointConfig"]["LocalPath"] = spec.output.checkpoint_local_path
    return out


def stopping_request(spec: "TrainingJobSpec") -> dict[str, Any]:
    """The stopping part: StoppingCondition, managed spot training and the retry strategy."""
    condition: dict[str, Any] = {"MaxRuntimeInSeconds": spec.stopping.max_run}
    if spec.stopping.max_wait is not None:
        condition["MaxWaitTimeInSeconds"] = spec.stopping.max_wait
    out: dict[str, Any] = {"StoppingCondition": condition,
                           "EnableManagedSpotTraining": spec.stopping.use_spot_instances}
    if spec.stopping.max_retry_attempts is not None:
        out["RetryStrategy"] = {"MaximumRetryAttempts": spec.stopping.max_retry_attempts}
    return out


def network_request(spec: "TrainingJobSpec") -> dict[str, Any]:
    """The network part: isolation, inter-container encryption and, with subnets and security groups, VpcConfig."""
    network = spec.network
    out: dict[str, Any] = {"EnableNetworkIsolation": network.enable_network_isolation,
                           "EnableInterContainerTrafficEncryption": network.encrypt_inter_container_traffic}
    if network.subnets and network.security_group_ids:
        out["VpcConfig"] = {"Subnets": list(network.subnets), "SecurityGroupIds": list(network.security_group_ids)}
    return out


def inputs_request(spec: "TrainingJobSpec") -> dict[str, Any]:
    """The inputs part: InputDataConfig, left out without channels."""
    return {"InputDataConfig": [channel_request(c) for c in spec.inputs]} if spec.inputs else {}


def compile_create_training_job_request(spec: "TrainingJobSpec", account: str | None = None) -> CreateTrainingJobRequest:
    """The whole request, one builder per part: what the SageMaker backend sends and what the local backend lays a
    job out from."""
    req: CreateTrainingJobRequest = {
        "TrainingJobName": spec.job_name,
        "RoleArn": role_arn(spec.role, account),
        **code_request(spec, account),
        "ResourceConfig": resource_config(spec),  # the compute part
        **output_request(spec, account),
        **stopping_request(spec),
        **network_request(spec),
        **inputs_request(spec),
    }
    if spec.code.environment:
        req["Environment"] = dict(spec.code.environment)
    if spec.tags:
        req["Tags"] = [{"Key": k, "Value": v} for k, v in spec.tags]
    req.update(profiler_request(spec, account))  # the observability part
    req.update(debugger_request(spec, account))
    return req
