"""Throttling, 5xx and dropped connections through a fault-injecting proxy: retried within budget."""

from __future__ import annotations

import re

import boto3
import pytest

from sagelaunch.launcher.common.aws.errors import AWSError
from sagelaunch.launcher.sagemaker.backend import submit
from tests.sagemaker.jobspecs import make_source, make_spec

pytestmark = pytest.mark.timeout(90)  # a wait that never ends must fail, not hang


@pytest.mark.parametrize("kind", ["500", "503", "throttle", "drop"])
def test_fit_succeeds_within_the_retry_budget(sagemaker_env, tmp_path, kind):
    fakes = sagemaker_env
    fakes.proxy.inject(kind, count=2, action="CreateTrainingJob")
    fakes.proxy.inject(kind, count=1, action="DescribeTrainingJob")
    job = submit(make_spec(f"retry-{kind}", make_source(tmp_path / "src"), profiler=None), logs=False)
    assert job.status == "Completed"
    creates = fakes.proxy.calls("CreateTrainingJob")
    assert [c.status for c in creates][:2] == ([None, None] if kind == "drop" else [creates[0].status] * 2)
    assert creates[-1].status == 200 and len(creates) == 3
    assert creates[0].body == creates[2].body  # the same request, retried


def test_upload_is_retried_after_a_server_error(sagemaker_env, tmp_path):
    fakes = sagemaker_env
    fakes.proxy.inject("500", count=1, service="s3")
    fakes.proxy.inject("throttle", count=1, service="s3")
    job = submit(make_spec("retry-s3", make_source(tmp_path / "src"), profiler=None), wait=False)
    puts = [c for c in fakes.proxy.calls(service="s3") if c.method == "PUT" and c.path.endswith("sourcedir.tar.gz")]
    assert puts and puts[-1].status == 200
    assert job.describe()["HyperParameters"]["sagemaker_submit_directory"].strip('"').endswith(puts[-1].path.split("?")[0])


def test_exhausted_retry_budget_fails_with_a_clear_message(sagemaker_env, tmp_path, monkeypatch):
    fakes = sagemaker_env
    monkeypatch.setenv("SAGELAUNCH_AWS_MAX_ATTEMPTS", "2")
    fakes.proxy.inject("throttle", count=5, action="CreateTrainingJob")
    spec = make_spec("retry-exhausted", make_source(tmp_path / "src"), profiler=None)
    with pytest.raises(AWSError) as info:
        submit(spec)
    text = str(info.value)
    assert "ThrottlingException after 2 attempts" in text and "SAGELAUNCH_AWS_MAX_ATTEMPTS" in text
    assert "was removed again" in text
    assert len(fakes.proxy.calls("CreateTrainingJob")) == 2
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_dropped_connections_beyond_the_budget(sagemaker_env, tmp_path, monkeypatch):
    fakes = sagemaker_env
    monkeypatch.setenv("SAGELAUNCH_AWS_MAX_ATTEMPTS", "2")
    fakes.proxy.inject("drop", count=2, action="CreateTrainingJob")
    with pytest.raises(AWSError, match="could not be reached") as info:
        submit(make_spec("drop-exhausted", make_source(tmp_path / "src"), profiler=None))
    assert len(fakes.proxy.calls("CreateTrainingJob")) == 2
    assert "Fix:" in str(info.value)


def test_waiting_survives_a_few_failed_polls(sagemaker_env, tmp_path, monkeypatch, capsys):
    fakes = sagemaker_env
    job = submit(make_spec("poll-gaps", make_source(tmp_path / "src"), profiler=None), wait=False)
    monkeypatch.setenv("SAGELAUNCH_AWS_MAX_ATTEMPTS", "1")  # every fault reaches the wait loop
    fakes.proxy.inject("503", count=3, action="DescribeTrainingJob")
    assert job.wait(logs=False)["TrainingJobStatus"] == "Completed"
    assert capsys.readouterr().out.count("polling poll-gaps") == 3

    job = submit(make_spec("poll-dead", make_source(tmp_path / "src"), profiler=None), wait=False)
    fakes.proxy.inject("throttle", count=10, action="DescribeTrainingJob")
    with pytest.raises(AWSError, match="ThrottlingException"):
        job.wait(logs=False)
    assert fakes.proxy.calls("DescribeTrainingJob")[-1].status == 400


def test_a_lost_create_reply_is_not_taken_for_a_failure(sagemaker_env, tmp_path, capsys):
    """SageMaker created the job but its answer was lost: the retry hears ResourceInUse about our own job."""
    fakes = sagemaker_env
    fakes.proxy.inject("lose_reply", count=1, action="CreateTrainingJob")
    spec = make_spec("reply-lost", make_source(tmp_path / "src"), profiler=None)
    job = submit(spec, wait=False)
    creates = fakes.proxy.calls("CreateTrainingJob")
    assert [c.status for c in creates] == [None, 400]  # the first took effect unheard, the retry was refused
    assert creates[0].body == creates[1].body
    description = job.describe()
    code = description["HyperParameters"]["sagemaker_submit_directory"].strip('"')
    bucket, key = code[len("s3://"):].split("/", 1)
    assert boto3.client("s3", region_name="us-west-2").list_objects_v2(Bucket=bucket, Prefix=key)["KeyCount"] == 1
    assert f"Created training job {spec.job_name}" in capsys.readouterr().out
    assert job.wait(logs=False)["TrainingJobStatus"] == "Completed"


def test_a_refused_retry_keeps_the_code_of_a_job_the_first_attempt_made(sagemaker_env, tmp_path, monkeypatch):
    """The first answer was lost, the retry throttled past the budget: the job exists, so its code stays."""
    fakes = sagemaker_env
    monkeypatch.setenv("SAGELAUNCH_AWS_MAX_ATTEMPTS", "2")
    fakes.proxy.inject("lose_reply", count=1, action="CreateTrainingJob")
    fakes.proxy.inject("throttle", count=1, action="CreateTrainingJob")
    spec = make_spec("reply-lost-throttled", make_source(tmp_path / "src"), profiler=None)
    with pytest.raises(AWSError) as info:
        submit(spec, wait=False)
    text = str(info.value)
    assert "ThrottlingException after 2 attempts" in text and "stays" in text and "removed" not in text
    code = sagemaker_env.proxy.calls("CreateTrainingJob")[0].json()["HyperParameters"]["sagemaker_submit_directory"]
    bucket, key = code.strip('"')[len("s3://"):].split("/", 1)
    assert boto3.client("s3", region_name="us-west-2").list_objects_v2(Bucket=bucket, Prefix=key)["KeyCount"] == 1
    assert boto3.client("sagemaker", region_name="us-west-2").describe_training_job(
        TrainingJobName=spec.job_name)["TrainingJobName"] == spec.job_name


def test_a_frozen_endpoint_during_the_upload_is_reported_and_ends_at_the_read_timeout(sagemaker_env, tmp_path,
                                                                                     monkeypatch, capsys):
    fakes = sagemaker_env
    monkeypatch.setenv("SAGELAUNCH_AWS_READ_TIMEOUT", "2")
    monkeypatch.setenv("SAGELAUNCH_AWS_MAX_ATTEMPTS", "2")
    fakes.proxy.inject("freeze", count=2, service="s3", path="sourcedir.tar.gz")  # reads the upload, never answers
    spec = make_spec("frozen-upload", make_source(tmp_path / "src"), profiler=None)
    with pytest.raises(AWSError) as info:
        submit(spec, wait=False)
    text = str(info.value)
    assert "stopped answering" in text and "2 s read timeout, 2 attempts" in text
    assert "SAGELAUNCH_AWS_READ_TIMEOUT" in text and info.value.code == "ReadTimeout"
    out = capsys.readouterr().out
    assert re.search(r"warning: no answer from the endpoint for \d+ s during upload of the code for", out), out
    assert "each attempt waits up to 2 s (SAGELAUNCH_AWS_READ_TIMEOUT), 2 attempts" in out
    puts = [c for c in fakes.proxy.calls(service="s3") if c.path.endswith("sourcedir.tar.gz")]
    assert len(puts) == 2 and all(p.status is None for p in puts)  # both attempts were frozen, none answered
    assert fakes.proxy.calls("CreateTrainingJob") == []
