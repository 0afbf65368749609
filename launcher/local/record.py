"""The first registry record of a local job, in DescribeTrainingJob's shape (plus "JobDir")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jobspec.profiling import profiling_parameters
from jobspec.spec import InputChannel, TrainingJobSpec
from launcher import registry
from launcher.local.artifacts import join


def first_record(spec: TrainingJobSpec, job_dir: Path, prefix: str, hyperparameters: dict[str, str]) -> dict[str, Any]:
    """The job's first DescribeTrainingJob-shaped record."""
    created = registry.now()
    record: dict[str, Any] = {
        "TrainingJobName": spec.job_name,
        "TrainingJobArn": f"arn:aws:sagemaker:{spec.region}:000000000000:training-job/{spec.job_name}",
        "TrainingJobStatus": "InProgress",
        "SecondaryStatus": "Starting",
        "SecondaryStatusTransitions": [{"Status": "Starting", "StartTime": created,
                                        "StatusMessage": "Preparing the instances for training"}],
        "CreationTime": created,
        "LastModifiedTime": created,
        "AlgorithmSpecification": {"TrainingImage": spec.image_uri, "TrainingInputMode": spec.input_mode},
        "HyperParameters": hyperparameters,
        "ResourceConfig": {"InstanceType": spec.instance_type, "InstanceCount": spec.instance_count,
                           "VolumeSizeInGB": spec.volume_size},
        "StoppingCondition": {"MaxRuntimeInSeconds": spec.max_run},
        "InputDataConfig": [_channel_record(c) for c in spec.inputs],
        "OutputDataConfig": {"S3OutputPath": spec.output_path or prefix},
        "Environment": dict(spec.environment),
        "EnableNetworkIsolation": spec.enable_network_isolation,
        "JobDir": str(job_dir),
    }
    if spec.role:
        record["RoleArn"] = spec.role
    if spec.checkpoint_local_path or spec.checkpoint_s3_uri:
        record["CheckpointConfig"] = {k: v for k, v in (("S3Uri", spec.checkpoint_s3_uri),
                                                        ("LocalPath", spec.checkpoint_local_path)) if v}
    if spec.profiler is not None:
        p = spec.profiler
        record["ProfilerConfig"] = {
            "S3OutputPath": p.s3_output_path or join(prefix, "profiler"),
            "ProfilingIntervalInMilliseconds": p.system_monitor_interval_millis,
            "ProfilingParameters": profiling_parameters(p.cpu_profiling_duration, p.file_rotation_interval),
            "DisableProfiler": p.disable_profiler,
        }
    return record


def _channel_record(channel: InputChannel) -> dict[str, Any]:
    if channel.uri.startswith("s3://"):
        source = {"S3DataSource": {"S3DataType": channel.s3_data_type, "S3Uri": channel.uri,
                                   "S3DataDistributionType": channel.distribution}}
    else:
        source = {"FileDataSource": {"FileUri": channel.uri}}
    entry = {"ChannelName": channel.name, "DataSource": source, "InputMode": channel.input_mode}
    if channel.content_type:
        entry["ContentType"] = channel.content_type
    return entry
