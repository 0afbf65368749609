"""CreateTrainingJob requests: content, code location, profiler entries, and botocore's own validation."""

from __future__ import annotations

import json
import re

import botocore.session
import botocore.validate
import pytest

from sagelaunch.jobspec.spec import replace
from sagelaunch.launcher.common.request import compile_create_training_job_request
from sagelaunch.estimators import PyTorch, TensorFlow
from sagelaunch.profiler_config import Profiler, ProfilerConfig

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


@pytest.fixture(scope="module")
def create_training_job_shape():
    model = botocore.session.get_session().get_service_model("sagemaker")
    return model.operation_model("CreateTrainingJob").input_shape


def botocore_validate(request, shape):
    botocore.validate.validate_parameters(request, shape)  # raises ParamValidationError


def test_profiled_modelparallel_job_request(create_training_job_shape):
    est = PyTorch(
        entry_point="train.py", source_dir="s3://code-bucket/src/sourcedir.tar.gz", role=ROLE, region="us-east-1",
        framework_version="2.0.0", instance_type="ml.p4d.24xlarge", instance_count=2,
        output_path="s3://out-bucket/jobs", hyperparameters={"epochs": 3, "model": "roberta-base", "lr": 2e-5},
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2, "ddp": True}}},
                      "mpi": {"enabled": True, "processes_per_host": 8}},
        profiler_config=ProfilerConfig(s3_output_path="s3://prof-bucket/p", system_monitor_interval_millis=100,
                                       profile_params=Profiler(cpu_profiling_duration=120, file_rotation_interval=60)),
        checkpoint_s3_uri="s3://ckpt-bucket/c", checkpoint_local_path="/opt/ml/checkpoints",
        use_spot_instances=True, max_run=3600, max_wait=7200, volume_kms_key="alias/vol", output_kms_key="alias/out",
        subnets=["subnet-0abc"], security_group_ids=["sg-0abc"], environment={"NCCL_DEBUG": "INFO"},
        tags=[{"Key": "team", "Value": "ml"}], encrypt_inter_container_traffic=True,
    )
    req = est.training_job_request("roberta-2024-01-01-00-00-00-000", inputs="s3://data-bucket/train")
    botocore_validate(req, create_training_job_shape)
    hp = req["HyperParameters"]
    assert {k: json.loads(v) for k, v in hp.items()} == {
        "epochs": 3, "model": "roberta-base", "lr": 2e-5,
        "sagemaker_program": "train.py", "sagemaker_submit_directory": "s3://code-bucket/src/sourcedir.tar.gz",
        "sagemaker_region": "us-east-1", "sagemaker_job_name": "roberta-2024-01-01-00-00-00-000",
        "sagemaker_container_log_level": 20, "sagemaker_mpi_enabled": True,
        "sagemaker_mpi_num_of_processes_per_host": 8, "sagemaker_mpi_custom_mpi_options": "",
        "mp_parameters": {"partitions": 2, "ddp": True}, "sagemaker_distributed_dataparallel_enabled": False,
        "sagemaker_instance_type": "ml.p4d.24xlarge",
    }
    assert req["AlgorithmSpecification"]["TrainingImage"] == (
        "763104351884.dkr.ecr.us-east-1.amazonaws.com/pytorch-training:2.0.0-gpu-py310-cu118-ubuntu20.04-sagemaker")
    assert req["ResourceConfig"] == {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2, "VolumeSizeInGB": 30,
                                     "VolumeKmsKeyId": "alias/vol"}
    assert req["StoppingCondition"] == {"MaxRuntimeInSeconds": 3600, "MaxWaitTimeInSeconds": 7200}
    assert req["CheckpointConfig"] == {"S3Uri": "s3://ckpt-bucket/c", "LocalPath": "/opt/ml/checkpoints"}
    assert req["OutputDataConfig"] == {"S3OutputPath": "s3://out-bucket/jobs", "KmsKeyId": "alias/out"}
    assert req["VpcConfig"] == {"Subnets": ["subnet-0abc"], "SecurityGroupIds": ["sg-0abc"]}
    assert req["EnableManagedSpotTraining"] and req["EnableInterContainerTrafficEncryption"]
    assert req["InputDataConfig"][0]["ChannelName"] == "training"
    assert req["ProfilerConfig"] == {
        "S3OutputPath": "s3://prof-bucket/p", "ProfilingIntervalInMilliseconds": 100, "DisableProfiler": False,
        "ProfilingParameters": {"CPUProfilingDuration": "120", "SMPFileRotationSecs": "60"},
    }
    assert "DebugHookConfig" not in req  # SMDebug cannot hook a job checkpointing to S3 and a local path (v2)
    (rule,) = req["ProfilerRuleConfigurations"]
    assert re.fullmatch(r"DetailedProfilerProcessingJobConfig-\d{4}(-\d{2}){5}-\d{3}", rule["RuleConfigurationName"])
    assert rule["RuleParameters"] == {"rule_to_invoke": "DetailedProfilerProcessing"}
    assert (rule["InstanceType"], rule["VolumeSizeInGB"]) == ("ml.m5.4xlarge", 128)
    assert rule["RuleEvaluatorImage"] == "503895931360.dkr.ecr.us-east-1.amazonaws.com/detailed-profiler-processing:latest"


def test_code_location_rules(create_training_job_shape):
    base = dict(entry_point="train.py", role=ROLE, region="eu-west-1", framework_version="2.12.0",
                instance_type="ml.m5.xlarge")
    spec = TensorFlow(**base, output_path="s3://my-out/prefix").to_spec("job-a")
    req = compile_create_training_job_request(spec)
    assert json.loads(req["HyperParameters"]["sagemaker_submit_directory"]) == "s3://my-out/job-a/source/sourcedir.tar.gz"
    no_out = TensorFlow(**base).to_spec("job-b")
    req = compile_create_training_job_request(no_out, account="123456789012")
    assert json.loads(req["HyperParameters"]["sagemaker_submit_directory"]) == (
        "s3://sagemaker-eu-west-1-123456789012/job-b/source/sourcedir.tar.gz")
    assert req["OutputDataConfig"]["S3OutputPath"] == "s3://sagemaker-eu-west-1-123456789012/"
    uploaded = replace(no_out, submit_directory="s3://up/job-b/source/sourcedir.tar.gz")
    req = compile_create_training_job_request(uploaded)
    assert json.loads(req["HyperParameters"]["sagemaker_submit_directory"]) == "s3://up/job-b/source/sourcedir.tar.gz"
    # no profiler_config: SDK v2's default monitoring and Debugger hook, written to the job's output path
    out = "s3://sagemaker-eu-west-1-000000000000/"
    assert req["ProfilerConfig"] == {"S3OutputPath": out, "DisableProfiler": False}
    assert req["DebugHookConfig"] == {"S3OutputPath": out, "CollectionConfigurations": []}
    assert "ProfilerRuleConfigurations" not in req
    named = TensorFlow(**{**base, "role": "SageMakerRole"}).to_spec("job-c")
    assert compile_create_training_job_request(named, account="123456789012")["RoleArn"] == (
        "arn:aws:iam::123456789012:role/SageMakerRole")
    botocore_validate(req, create_training_job_shape)


def test_disabled_profiler_and_local_jobs_compile(create_training_job_shape):
    off = PyTorch(entry_point="t.py", role=ROLE, region="us-west-2", framework_version="2.6.0",
                  instance_type="ml.g5.xlarge", disable_profiler=True)
    req = off.training_job_request("off-1")
    assert req["ProfilerConfig"] == {"DisableProfiler": True} and "ProfilerRuleConfigurations" not in req
    botocore_validate(req, create_training_job_shape)
    local = PyTorch(entry_point="t.py", framework_version="2.0.0", instance_type="local", output_path="/tmp/x",
                    profiler_config=ProfilerConfig())
    botocore_validate(local.training_job_request("local-1"), create_training_job_shape)
