"""launcher/common/aws and launcher/sagemaker helpers on their own: names, clients, uploads (multipart), buckets, error messages."""

from __future__ import annotations

import os
from datetime import datetime, timezone

import boto3
import pytest

from sagelaunch.jobspec import names as naming
from sagelaunch.jobspec.s3uri import parse_s3_uri
from sagelaunch.launcher.common.aws import clients, limits, s3
from sagelaunch.launcher.common.aws.errors import AWSError

pytestmark = pytest.mark.timeout(90)  # a wait that never ends must fail, not hang


def test_job_names_are_valid_unique_and_short_enough():
    when = datetime(2026, 3, 4, 5, 6, 7, 890123, tzinfo=timezone.utc)
    assert naming.job_name("roberta", when) == "roberta-2026-03-04-05-06-07-890"
    long = naming.job_name("a" * 100 + "_b", when)
    assert len(long) == 63 and long.endswith("-2026-03-04-05-06-07-890")
    assert naming.NAME_PATTERN.match(long)
    assert naming.job_name("my_job.v2 (test)", when) == "my-job-v2-test-2026-03-04-05-06-07-890"
    with pytest.raises(ValueError, match="has no letter or digit"):
        naming.job_name("___")
    with pytest.raises(ValueError, match="at most 63"):
        naming.check_name("x" * 64)
    assert naming.check_name("ok-name-1") == "ok-name-1"


def test_clients_honour_endpoint_and_bounded_standard_retries(sagemaker_env, monkeypatch):
    sm = clients.client("sagemaker", "us-west-2")
    assert sm.meta.endpoint_url == sagemaker_env.proxy.url
    assert sm.meta.config.retries == {"mode": "standard", "total_max_attempts": limits.DEFAULT_MAX_ATTEMPTS}
    monkeypatch.setenv("SAGELAUNCH_AWS_MAX_ATTEMPTS", "7")
    assert clients.client("sagemaker", "us-west-2").meta.config.retries["total_max_attempts"] == 7
    monkeypatch.setenv("SAGELAUNCH_AWS_MAX_ATTEMPTS", "zero")
    with pytest.raises(ValueError, match="SAGELAUNCH_AWS_MAX_ATTEMPTS='zero'"):
        clients.client("sagemaker", "us-west-2")
    monkeypatch.delenv("SAGELAUNCH_AWS_MAX_ATTEMPTS")
    assert (sm.meta.config.connect_timeout, sm.meta.config.read_timeout) == (10, 60)  # bounded, never forever
    monkeypatch.setenv("SAGELAUNCH_AWS_READ_TIMEOUT", "2.5")
    assert clients.client("sagemaker", "us-west-2").meta.config.read_timeout == 2.5
    monkeypatch.setenv("SAGELAUNCH_AWS_READ_TIMEOUT", "-1")
    with pytest.raises(ValueError, match=r"SAGELAUNCH_AWS_READ_TIMEOUT='-1' must be a number of seconds > 0"):
        clients.client("sagemaker", "us-west-2")
    monkeypatch.delenv("SAGELAUNCH_AWS_READ_TIMEOUT")
    assert clients.account_id("us-west-2") == "123456789012"


def test_missing_credentials_are_explained(sagemaker_env, monkeypatch, tmp_path):
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(AWSError, match="no AWS credentials were found") as info:
        s3.default_bucket("eu-west-1")
    assert "aws configure" in str(info.value) and "instance_type='local'" in str(info.value)


def test_large_archives_go_up_in_parts(sagemaker_env, tmp_path):
    bucket = s3.ensure_bucket("upload-parts-1", "us-west-2")
    assert s3.ensure_bucket(bucket, "us-west-2") == bucket  # idempotent
    big = tmp_path / "big.tar.gz"
    payload = os.urandom(11 * 1024 * 1024)
    big.write_bytes(payload)
    sagemaker_env.proxy.reset()
    uri = s3.upload_file(big, "s3://upload-parts-1/code/", multipart_threshold=5 * 1024 * 1024,
                         multipart_chunksize=5 * 1024 * 1024)
    assert uri == "s3://upload-parts-1/code/big.tar.gz"
    from urllib.parse import parse_qs, urlparse

    queries = [(c.method, sorted(parse_qs(urlparse(c.path).query, keep_blank_values=True))) for c in sagemaker_env.proxy.calls()]
    assert queries[0] == ("POST", ["uploads"]) and queries[-1] == ("POST", ["uploadId"])
    assert queries[1:-1] == [("PUT", ["partNumber", "uploadId"])] * 3
    body = boto3.client("s3", region_name="us-west-2").get_object(Bucket="upload-parts-1", Key="code/big.tar.gz")["Body"]
    assert body.read() == payload

    small = tmp_path / "small.txt"
    small.write_text("x")
    sagemaker_env.proxy.reset()
    s3.upload_file(small, "s3://upload-parts-1/code/small.txt")
    assert [c.method for c in sagemaker_env.proxy.calls()] == ["PUT"]
    assert s3.prefix_exists("s3://upload-parts-1/code/small") and not s3.prefix_exists("s3://upload-parts-1/nope")
    assert not s3.prefix_exists("s3://no-such-bucket-xyz/data")


def test_bad_s3_uris_name_the_problem():
    with pytest.raises(ValueError, match="not an S3 URI"):
        parse_s3_uri("/data/train")
    with pytest.raises(ValueError, match="no bucket name"):
        parse_s3_uri("s3:///key")


def test_not_found_is_recognised_in_aws_and_moto_wording():
    from botocore.exceptions import ClientError

    from sagelaunch.launcher.common.aws.errors import describe_exception, is_not_found

    def answer(code: str, message: str) -> ClientError:
        return ClientError({"Error": {"Code": code, "Message": message}}, "DescribeTrainingJob")

    assert is_not_found(answer("ValidationException", "Requested resource not found."))  # real SageMaker
    assert is_not_found(answer("ValidationException", "Could not find training job 'arn:…:training-job/x'."))  # moto
    assert is_not_found(answer("ResourceNotFound", "Resource not found"))
    assert not is_not_found(answer("ValidationException", "1 validation error detected: TrainingJobName must match"))
    assert not is_not_found(answer("AccessDeniedException", "not found in policy"))
    assert not is_not_found(ValueError("not found"))
    clear = describe_exception("describe", answer("ValidationException", "Requested resource not found."))
    assert is_not_found(clear)  # the translated AWSError too


def test_name_check_accepts_aws_not_found_and_rejects_other_errors(sagemaker_env):
    from botocore.exceptions import ClientError

    from sagelaunch.launcher.sagemaker.training import check_name_free

    # the fake answers DescribeTrainingJob of an unknown name in SageMaker's words
    with pytest.raises(ClientError) as real:
        clients.client("sagemaker", "us-west-2").describe_training_job(TrainingJobName="name-check-free-1")
    assert real.value.response["Error"] == {"Code": "ValidationException", "Message": "Requested resource not found."}
    check_name_free("name-check-free-1", "us-west-2")  # free: no error
    sagemaker_env.proxy.inject("error", action="DescribeTrainingJob", code="ValidationException",
                               message="1 validation error detected: Value 'x!' at 'trainingJobName' failed")
    with pytest.raises(AWSError, match="rejected as invalid"):  # any other ValidationException is not "free"
        check_name_free("name-check-free-2", "us-west-2")
