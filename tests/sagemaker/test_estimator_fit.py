"""A user's path: PyTorch(...).fit(inputs) on an ml.* instance, against the moto server."""

from __future__ import annotations

import json

import boto3
import pytest

from sagelaunch.estimators import PyTorch, TrainingInput
from sagelaunch.profiler_config import ProfilerConfig
from tests.fixtures.sagemaker_fakes import Step
from tests.sagemaker.jobspecs import ROLE, SHIPPED, archive_names, make_source

pytestmark = pytest.mark.timeout(90)  # a wait that never ends must fail, not hang


def test_estimator_fit_with_smp_profiler_and_two_channels(sagemaker_env, tmp_path, capsys):
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket="fit-data-1", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.put_object(Bucket="fit-data-1", Key="train/part-0.jsonl", Body=b"{}\n")
    s3.put_object(Bucket="fit-data-1", Key="val/part-0.csv", Body=b"1\n")
    sagemaker_env.plan("roberta-smp", Step("InProgress", "Training", "Training", logs=(("algo-1", "loss 0.1"),)),
                       Step("Completed", "Completed", "done"))
    estimator = PyTorch(
        entry_point="train.py", source_dir=str(make_source(tmp_path / "src")), ignore_patterns=["*.bin"], role=ROLE,
        framework_version="2.0.0", py_version="py310", instance_type="ml.p4d.24xlarge", instance_count=2,
        region="us-west-2", base_job_name="roberta-smp", hyperparameters={"epochs": 1},
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {
            "partitions": 2, "microbatches": 4, "ddp": True}}}, "mpi": {"enabled": True, "processes_per_host": 8}},
        profiler_config=ProfilerConfig(system_monitor_interval_millis=500, s3_output_path="s3://fit-data-1/profiles"),
    )
    job = estimator.fit({"train": "s3://fit-data-1/train",
                         "validation": TrainingInput("s3://fit-data-1/val", content_type="text/csv")})
    assert job is estimator.latest_training_job and job.status == "Completed"
    assert job.name.startswith("roberta-smp-") and len(job.name) <= 63
    assert "[algo-1] loss 0.1" in capsys.readouterr().out

    stored = boto3.client("sagemaker", region_name="us-west-2").describe_training_job(TrainingJobName=job.name)
    assert stored["AlgorithmSpecification"]["TrainingImage"] == estimator.training_image_uri()
    assert json.loads(stored["HyperParameters"]["mp_parameters"]) == {"partitions": 2, "microbatches": 4, "ddp": True}
    assert json.loads(stored["HyperParameters"]["sagemaker_mpi_enabled"]) is True
    assert stored["ProfilerConfig"]["S3OutputPath"] == "s3://fit-data-1/profiles"
    assert stored["ProfilerConfig"]["ProfilingIntervalInMilliseconds"] == 500
    assert [c["ChannelName"] for c in stored["InputDataConfig"]] == ["train", "validation"]
    assert job.profiler_output == f"s3://fit-data-1/profiles/{job.name}/profiler-output/"

    code = json.loads(stored["HyperParameters"]["sagemaker_submit_directory"])
    assert code == f"s3://sagemaker-us-west-2-123456789012/{job.name}/source/sourcedir.tar.gz"
    bucket, key = code[5:].split("/", 1)
    assert archive_names(s3.get_object(Bucket=bucket, Key=key)["Body"].read()) == SHIPPED
