"""Nothing newer is replaced by something older (issue 32): the restore from checkpoint_s3_uri merges by age, and a
local job never replaces another job's model.tar.gz — another registry's local job, or a SageMaker job writing to the
same S3 prefix — checked before it starts and again as it writes. Real jobs, a moto server."""

from __future__ import annotations

import os
import time
from pathlib import Path

import boto3
import pytest

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher.local import registry
from sagelaunch.launcher.backends import submit
from tests.local.conftest import make_spec, unique
from tests.local.test_files_and_modes import _final, _until_go, _wait_started


def _bucket() -> tuple[object, str]:
    s3 = boto3.client("s3", region_name="us-west-2")
    bucket = unique("never-older")
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    return s3, bucket


@pytest.mark.slow
def test_the_checkpoint_restore_keeps_local_files_newer_than_s3s(tmp_path, moto_server):
    s3, bucket = _bucket()
    s3.put_object(Bucket=bucket, Key="ckpt/epoch.txt", Body=b"epoch 3 (uploaded before the crash)")
    s3.put_object(Bucket=bucket, Key="ckpt/vocab.txt", Body=b"vocab from s3")
    local = tmp_path / "checkpoints"
    local.mkdir()
    newer, older = local / "epoch.txt", local / "vocab.txt"
    newer.write_text("epoch 7 (written after the last upload)")
    older.write_text("stale vocab")
    os.utime(newer, (time.time() + 3600, time.time() + 3600))  # written after S3's copy
    os.utime(older, (time.time() - 3600, time.time() - 3600))  # written before it
    spec = make_spec(checkpoint_s3_uri=f"s3://{bucket}/ckpt", checkpoint_local_path=str(local))
    job = submit(spec, wait=True, logs=False)
    assert job.describe()["TrainingJobStatus"] == "Completed"
    assert newer.read_text() == "epoch 7 (written after the last upload)"
    assert older.read_text() == "vocab from s3"
    log = (registry.job_dir(spec.job_name) / "logs" / "job.log").read_text()
    assert f"checkpoints: kept 1 file(s) of {local} newer than their copies under checkpoint_s3_uri" in log
    assert log.count("epoch.txt") == 1 and "vocab.txt" not in log


@pytest.mark.slow
def test_a_job_of_the_same_name_in_another_registry_never_replaces_the_model(tmp_path, monkeypatch):
    outputs = tmp_path / "outputs"
    spec = make_spec(output_path=str(outputs))
    submit(spec, wait=True, logs=False)
    model = outputs / spec.job_name / "output" / "model.tar.gz"
    before = model.read_bytes()
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "another-home"))  # another registry: the name is free there
    with pytest.raises(SagelaunchError) as taken:
        submit(spec, wait=True, logs=False)
    assert taken.value.field == "job_name" and taken.value.value == spec.job_name
    assert f"{outputs / spec.job_name / 'output'} already holds another job's outputs" in str(taken.value)
    assert model.read_bytes() == before
    assert registry.list_jobs() == []  # refused before any record or folder


@pytest.mark.slow
def test_a_sagemaker_jobs_model_in_the_same_s3_prefix_is_never_replaced(moto_server):
    s3, bucket = _bucket()
    spec = make_spec(output_path=f"s3://{bucket}/results")
    key = f"results/{spec.job_name}/output/model.tar.gz"
    s3.put_object(Bucket=bucket, Key=key, Body=b"a SageMaker job's model")
    with pytest.raises(SagelaunchError, match="already holds another job's outputs"):
        submit(spec, wait=True, logs=False)
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b"a SageMaker job's model"


@pytest.mark.slow
def test_a_model_written_by_another_job_while_this_one_ran_is_kept(tmp_path):
    outputs, marks = tmp_path / "outputs", tmp_path / "marks"
    spec = _until_go(marks, output_path=str(outputs))
    submit(spec, wait=False, logs=False)
    _wait_started(marks)
    model = outputs / spec.job_name / "output" / "model.tar.gz"
    model.parent.mkdir(parents=True, exist_ok=True)
    model.write_bytes(b"the other job's model")
    (marks / "go").touch()
    record = _final(spec.job_name)
    assert record["TrainingJobStatus"] == "Failed"
    assert "already holds another job's outputs" in record["FailureReason"]
    assert model.read_bytes() == b"the other job's model"
    assert not list(model.parent.glob("*.partial"))
