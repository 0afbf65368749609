"""The SDK v2 job settings offline: what each puts in the request (pure), each field's error, the cross-field
rules, what local jobs refuse, TrainingInput's v2 positions and config, and retired arguments."""

from __future__ import annotations

import pytest

from sagelaunch.estimators import InstanceGroup, PyTorch, ShuffleConfig, TensorFlow, TrainingCompilerConfig, TrainingInput
from sagelaunch.estimators.settings import LOCAL_REFUSED

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
BASE = dict(entry_point="train.py", role=ROLE, framework_version="2.0.0", py_version="py310",
            instance_type="ml.g5.xlarge", region="us-west-2")


def request(inputs=None, **kwargs):
    return PyTorch(**{**BASE, **kwargs}).training_job_request("job-1", inputs)


def error_of(**kwargs) -> str:
    with pytest.raises(ValueError) as err:
        PyTorch(**{**BASE, **kwargs})
    return str(err.value)


def test_each_setting_lands_where_v2_sends_it():
    r = request(metric_definitions=[{"Name": "loss", "Regex": "loss=([0-9.]+)"}], input_mode="FastFile",
                keep_alive_period_in_seconds=600, max_retry_attempts=3, container_entry_point=["python", "x.py"],
                container_arguments=["--a", "1"], disable_output_compression=True, tags={"team": "ml"},
                code_location="s3://code-bucket/prefix/")
    algo = r["AlgorithmSpecification"]
    assert algo["MetricDefinitions"] == [{"Name": "loss", "Regex": "loss=([0-9.]+)"}]
    assert algo["TrainingInputMode"] == "FastFile" and algo["EnableSageMakerMetricsTimeSeries"] is True
    assert algo["ContainerEntrypoint"] == ["python", "x.py"] and algo["ContainerArguments"] == ["--a", "1"]
    assert r["ResourceConfig"]["KeepAlivePeriodInSeconds"] == 600
    assert r["RetryStrategy"] == {"MaximumRetryAttempts": 3}
    assert r["OutputDataConfig"]["CompressionType"] == "NONE"
    assert r["Tags"] == [{"Key": "team", "Value": "ml"}]
    assert r["HyperParameters"]["sagemaker_submit_directory"] == '"s3://code-bucket/prefix/job-1/source/sourcedir.tar.gz"'


def test_sagemaker_metrics_follow_v2s_default():
    assert "EnableSageMakerMetricsTimeSeries" not in request(enable_sagemaker_metrics=None)["AlgorithmSpecification"]
    assert request(enable_sagemaker_metrics=False)["AlgorithmSpecification"]["EnableSageMakerMetricsTimeSeries"] is False
    image_only = request(framework_version=None, py_version=None,
                         image_uri="763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0-gpu-py310")
    assert "EnableSageMakerMetricsTimeSeries" not in image_only["AlgorithmSpecification"]
    tf = TensorFlow(**{**BASE, "framework_version": "2.13", "py_version": "py310"}).training_job_request("j")
    assert tf["AlgorithmSpecification"]["EnableSageMakerMetricsTimeSeries"] is True


def test_model_uri_becomes_the_model_channel_after_the_inputs():
    r = request("s3://data/train", model_uri="s3://models/m/model.tar.gz", model_channel_name="pretrained")
    assert [c["ChannelName"] for c in r["InputDataConfig"]] == ["training", "pretrained"]
    assert r["InputDataConfig"][1] == {
        "ChannelName": "pretrained", "ContentType": "application/x-sagemaker-model", "InputMode": "File",
        "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://models/m/model.tar.gz",
                                        "S3DataDistributionType": "FullyReplicated"}}}
    with pytest.raises(ValueError, match="model_uri both make the channel 'model'"):
        request({"model": "s3://data/m"}, model_uri="s3://models/m/model.tar.gz")


def test_instance_groups_replace_type_and_count():
    groups = [InstanceGroup("gpu", "ml.g5.xlarge", 2), InstanceGroup(instance_group_name="cpu",
                                                                      instance_type="ml.c5.xlarge", instance_count=1)]
    base = {k: v for k, v in BASE.items() if k != "instance_type"}
    est = PyTorch(**base, instance_groups=groups)
    r = est.training_job_request("j", {"train": TrainingInput("s3://data/t", instance_groups=["gpu"])})
    assert r["ResourceConfig"] == {"VolumeSizeInGB": 30, "InstanceGroups": [
        {"InstanceGroupName": "gpu", "InstanceType": "ml.g5.xlarge", "InstanceCount": 2},
        {"InstanceGroupName": "cpu", "InstanceType": "ml.c5.xlarge", "InstanceCount": 1}]}
    assert "-gpu-" in r["AlgorithmSpecification"]["TrainingImage"]  # v2 picks the GPU group's image
    assert r["InputDataConfig"][0]["DataSource"]["S3DataSource"]["InstanceGroupNames"] == ["gpu"]
    with pytest.raises(ValueError, match=r"instance_groups \['cpu2'\] are not among"):
        est.training_job_request("j", {"train": TrainingInput("s3://data/t", instance_groups=["cpu2"])})
    assert "both set" in error_of(instance_groups=groups)
    assert "drop instance_count" in error_of(**{**base, "instance_type": None}, instance_groups=groups, instance_count=3)
    assert "repeat" in error_of(**{**base, "instance_type": None}, instance_groups=[groups[0], groups[0]])
    assert "distribution with instance_groups" in error_of(
        **{**base, "instance_type": None}, instance_groups=groups, distribution={"torch_distributed": {"enabled": True}})
    assert "instance_type is required" in error_of(instance_type=None)
    with pytest.raises(ValueError, match="runs on SageMaker only"):
        InstanceGroup("g", "local", 1)
    with pytest.raises(ValueError, match="instance_group_name"):
        InstanceGroup("bad name!", "ml.g5.xlarge", 1)


@pytest.mark.parametrize("kwargs, words", [
    ({"metric_definitions": [{"Name": "loss"}]}, ["metric_definitions entry", "'Regex'"]),
    ({"metric_definitions": [{"Name": "loss", "Regex": "loss=(["}]}, ["not a regular expression"]),
    ({"input_mode": "pipe"}, ["input_mode='pipe'", "did you mean 'Pipe'", "File, Pipe, FastFile"]),
    ({"keep_alive_period_in_seconds": 4000}, ["keep_alive_period_in_seconds", "3600"]),
    ({"max_retry_attempts": 0}, ["max_retry_attempts", "1"]),
    ({"container_entry_point": []}, ["container_entry_point has 0 entries", "1..100"]),
    ({"container_arguments": ["x" * 300]}, ["container_arguments entry", "1-256"]),
    ({"tags": {"aws:team": "x"}}, ["tags entry", "aws:"]),
    ({"code_location": "bucket/prefix"}, ["code_location='bucket/prefix'", "s3://<bucket>"]),
    ({"dependencies": ["s3://bkt/lib"]}, ["dependencies entry", "local files or folders"]),
    ({"git_config": {"branch": "main"}}, ["git_config needs 'repo'"]),
    ({"git_config": {"repo": "/srv/git/project"}}, ["git_config['repo']", "https://", "source_dir"]),
    ({"git_config": {"repo": "https://h/p.git", "brnch": "x"}}, ["unknown key", "brnch", "branch"]),
    ({"git_config": {"repo": "https://h/p.git", "2FA_enabled": "yes"}}, ["2FA_enabled", "bool"]),
    ({"git_config": {"repo": "https://u:secret@h/p.git"}}, ["credentials in the URL", "token"]),
    ({"model_uri": "model.tar.gz"}, ["model_uri='model.tar.gz'", "S3", "instance_type='local'"]),
    ({"model_channel_name": "bad name"}, ["model_channel_name='bad name'", "A-Z"]),
    ({"sagemaker_session": object()}, ["sagemaker_session=object", "boto3.Session"]),
    ({"source_dir": "s3://bkt/code/sourcedir.tar.gz", "dependencies": ["lib"]}, ["dependencies with source_dir"]),
])
def test_each_field_error_names_the_field_the_value_and_a_fix(kwargs, words):
    message = error_of(**kwargs)
    for word in words:
        assert word in message, (word, message)


def test_secrets_never_show_in_git_config_errors():
    message = error_of(git_config={"repo": "https://h/p.git", "token": 12345})
    assert "12345" not in message and "<hidden>" in message


@pytest.mark.parametrize("field, value", [
    ("keep_alive_period_in_seconds", 60), ("max_retry_attempts", 2), ("code_location", "s3://bkt/p"),
    ("container_entry_point", ["python"]), ("container_arguments", ["--x"]), ("disable_output_compression", True),
])
def test_local_jobs_refuse_what_only_sagemaker_does(field, value):
    message = error_of(instance_type="local", **{field: value})
    assert f"{field}=" in message and "not available in local jobs" in message and "run on SageMaker" in message
    assert set(LOCAL_REFUSED) >= {field}


def test_local_jobs_accept_what_is_harmless_and_refuse_pipe():
    est = PyTorch(**{**BASE, "instance_type": "local"}, metric_definitions=[{"Name": "a", "Regex": "a=(.*)"}],
                  enable_sagemaker_metrics=True, input_mode="FastFile", tags={"a": "b"},
                  model_uri="/tmp/model.tar.gz")
    spec = est.to_spec("j")
    assert spec.code.input_mode == "FastFile" and spec.inputs[-1].name == "model"
    assert "input_mode='Pipe'" in error_of(instance_type="local", input_mode="Pipe")
    with pytest.raises(ValueError, match=r"TrainingInput\(compression='Gzip'\) is not available in local jobs"):
        est.to_spec("j", TrainingInput("/tmp/data", compression="Gzip"))
    with pytest.raises(ValueError, match=r"shuffle_config.*not available in local jobs"):
        est.to_spec("j", TrainingInput("/tmp/data", shuffle_config=ShuffleConfig(1)))


def test_training_input_takes_v2s_arguments_in_v2s_order():
    ti = TrainingInput("s3://bkt/p", "ShardedByS3Key", "Gzip", "text/csv", "RecordIO", "S3Prefix", ["g"], "Pipe",
                       ["a", "b"], "y", ShuffleConfig(3), {"HubContentArn": "arn"}, {"AcceptEula": True})
    assert ti.config == {
        "DataSource": {"S3DataSource": {"S3DataType": "S3Prefix", "S3Uri": "s3://bkt/p",
                                        "S3DataDistributionType": "ShardedByS3Key", "InstanceGroupNames": ["g"],
                                        "AttributeNames": ["a", "b"], "HubAccessConfig": {"HubContentArn": "arn"},
                                        "ModelAccessConfig": {"AcceptEula": True}}},
        "CompressionType": "Gzip", "ContentType": "text/csv", "RecordWrapperType": "RecordIO", "InputMode": "Pipe",
        "TargetAttributeName": "y", "ShuffleConfig": {"Seed": 3}}
    assert TrainingInput("s3://bkt/p").config == {"DataSource": {"S3DataSource": {
        "S3DataType": "S3Prefix", "S3Uri": "s3://bkt/p", "S3DataDistributionType": "FullyReplicated"}}}
    # v2 sends no distribution when a target attribute is named and no distribution given
    assert "S3DataDistributionType" not in TrainingInput("s3://bkt/p", target_attribute_name="y").config[
        "DataSource"]["S3DataSource"]
    with pytest.raises(ValueError, match=r"target_attribute_name='y'\) is for SageMaker AutoML jobs"):
        request(TrainingInput("s3://bkt/p", target_attribute_name="y"))  # CreateTrainingJob has no such field
    with pytest.raises(ValueError, match="distribution='Sharded'.*ShardedByS3Key"):
        TrainingInput("s3://bkt/p", "Sharded")
    with pytest.raises(ValueError, match="record_wrapping='recordio'.*RecordIO"):
        TrainingInput("s3://bkt/p", record_wrapping="recordio")
    with pytest.raises(TypeError, match="both by position and by name"):
        TrainingInput("s3://bkt/p", "FullyReplicated", distribution="ShardedByS3Key")


def test_a_lone_training_inputs_mode_is_the_jobs_as_in_v2():
    lone = request(TrainingInput("s3://bkt/p", input_mode="FastFile"))
    assert lone["AlgorithmSpecification"]["TrainingInputMode"] == "FastFile"
    in_dict = request({"train": TrainingInput("s3://bkt/p", input_mode="Pipe")})
    assert in_dict["AlgorithmSpecification"]["TrainingInputMode"] == "File"
    assert in_dict["InputDataConfig"][0]["InputMode"] == "Pipe"
    assert "InputMode" not in request("s3://bkt/p")["InputDataConfig"][0]


def test_retired_arguments_are_refused_saying_so():
    message = error_of(compiler_config={"enabled": True})
    assert "compiler_config" in message and "Training Compiler is retired" in message
    with pytest.raises(ValueError, match="Training Compiler is retired"):
        TrainingCompilerConfig()
    message = error_of(train_instance_type="ml.g5.xlarge")
    assert "train_instance_type" in message and "SDK v1 name" in message and "instance_type=" in message
    PyTorch(**BASE, compiler_config=None)  # "off" loses nothing


def test_session_region_is_the_jobs_and_a_conflict_is_named():
    import boto3
    session = boto3.Session(region_name="eu-west-1", aws_access_key_id="k", aws_secret_access_key="s")
    est = PyTorch(**{k: v for k, v in BASE.items() if k != "region"}, sagemaker_session=session)
    assert est.resolved.region == "eu-west-1" and ".eu-west-1." in est.resolved.image_uri
    assert "differs from the sagemaker_session's region 'eu-west-1'" in error_of(sagemaker_session=session)
