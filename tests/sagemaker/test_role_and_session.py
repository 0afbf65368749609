"""A bare role name resolves through IAM GetRole (keeping its path), and a sagemaker_session's credentials,
region and bucket are the ones the SageMaker backend uses — against the moto server."""

from __future__ import annotations

import json

import boto3
import pytest

from sagelaunch.estimators import PyTorch, Session
from sagelaunch.launcher.common.aws.errors import AWSError
from tests.fixtures.sagemaker_fakes import Step

pytestmark = pytest.mark.timeout(90)
TRUST = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                            "Principal": {"Service": "sagemaker.amazonaws.com"}}]})


def _estimator(tmp_path, **kwargs) -> PyTorch:
    (tmp_path / "train.py").write_text("print('hi')\n")
    return PyTorch(**{"entry_point": str(tmp_path / "train.py"), "framework_version": "2.0.0", "py_version": "py310",
                      "instance_type": "ml.g5.xlarge", "role": "arn:aws:iam::123456789012:role/SageMakerRole",
                      **kwargs})


def test_a_role_name_resolves_with_its_path_and_a_missing_one_is_named(sagemaker_env, tmp_path):
    iam = boto3.client("iam", region_name="us-west-2")
    iam.create_role(RoleName="AmazonSageMaker-ExecutionRole-20260101T000000", Path="/service-role/",
                    AssumeRolePolicyDocument=TRUST)
    sagemaker_env.plan("pytorch-training", Step("Completed", "Completed", "done"))
    job = _estimator(tmp_path, role="AmazonSageMaker-ExecutionRole-20260101T000000", region="us-west-2").fit(
        wait=False)
    stored = boto3.client("sagemaker", region_name="us-west-2").describe_training_job(TrainingJobName=job.name)
    assert stored["RoleArn"] == ("arn:aws:iam::123456789012:role/service-role/"
                                 "AmazonSageMaker-ExecutionRole-20260101T000000")
    with pytest.raises(AWSError) as err:
        _estimator(tmp_path, role="NoSuchRole-x", region="us-west-2").fit(wait=False)
    assert "no IAM role named 'NoSuchRole-x'" in str(err.value) and "full ARN" in str(err.value)


def test_a_boto3_session_gives_the_job_its_region_and_credentials(sagemaker_env, tmp_path):
    session = boto3.Session(region_name="eu-west-1", aws_access_key_id="other-key", aws_secret_access_key="s")
    sagemaker_env.proxy.reset()
    job = _estimator(tmp_path, sagemaker_session=session).fit(wait=False)
    assert job.describe()["TrainingJobName"] == job.name  # the handle keeps the session (eu-west-1) for later calls
    calls = sagemaker_env.proxy.calls()
    keys = {r.headers.get("authorization", "").split("Credential=")[-1].split("/")[0] for r in calls}
    assert keys == {"other-key"}, keys  # every call of the job signed with the session's credentials
    assert {r.action for r in calls} >= {"CreateTrainingJob", "DescribeTrainingJob"}
    stored = boto3.client("sagemaker", region_name="eu-west-1").describe_training_job(TrainingJobName=job.name)
    assert stored["OutputDataConfig"]["S3OutputPath"] == "s3://sagemaker-eu-west-1-123456789012/"
    assert ".eu-west-1." in stored["AlgorithmSpecification"]["TrainingImage"]


def test_our_session_bucket_prefix_and_upload_data(sagemaker_env, tmp_path):
    data = tmp_path / "data"
    (data / "sub").mkdir(parents=True)
    (data / "a.csv").write_text("1\n")
    (data / "sub" / "b.csv").write_text("2\n")
    session = Session(default_bucket="team-bucket-1", default_bucket_prefix="team-a")
    uri = session.upload_data(str(data), key_prefix="train")
    assert uri == "s3://team-bucket-1/team-a/train"
    listed = boto3.client("s3", region_name="us-west-2").list_objects_v2(Bucket="team-bucket-1")["Contents"]
    assert sorted(o["Key"] for o in listed) == ["team-a/train/a.csv", "team-a/train/sub/b.csv"]
    job = _estimator(tmp_path, sagemaker_session=session).fit(uri, wait=False)
    stored = boto3.client("sagemaker", region_name="us-west-2").describe_training_job(TrainingJobName=job.name)
    assert stored["OutputDataConfig"]["S3OutputPath"] == "s3://team-bucket-1/team-a/"
    assert json.loads(stored["HyperParameters"]["sagemaker_submit_directory"]) == (
        f"s3://team-bucket-1/team-a/{job.name}/source/sourcedir.tar.gz")
    with pytest.raises(ValueError, match=r"Session\(sagemaker_client=…\) is not supported.*boto_session"):
        Session(sagemaker_client=object())
