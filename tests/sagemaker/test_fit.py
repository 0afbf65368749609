"""fit() on SageMaker end to end against the moto server: upload, CreateTrainingJob, wait, logs."""

from __future__ import annotations

import json

import boto3
import pytest

from sagelaunch.launcher.common.request import compile_create_training_job_request
from sagelaunch.jobspec.spec import replace
from sagelaunch.launcher.sagemaker.backend import SageMakerTrainingJob, submit
from sagelaunch.launcher.backends import attach
from tests.fixtures.sagemaker_fakes import Step
from tests.sagemaker.jobspecs import IMAGE, SHIPPED, SMP, archive_names, make_source, make_spec

pytestmark = pytest.mark.timeout(90)  # a wait that never ends must fail, not hang

BUCKET = "sagemaker-us-west-2-123456789012"


@pytest.fixture
def direct(moto_server):
    """boto3 clients that talk to moto directly (not recorded by the proxy)."""
    return lambda service: boto3.client(service, endpoint_url=moto_server, region_name="us-west-2")


def remove_default_bucket(s3) -> None:
    """Start with no default bucket, whichever test (or SDK v2, in the parity tests) made it before."""
    try:
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket=BUCKET)
        for page in pages:
            for item in page.get("Contents", []):
                s3.delete_object(Bucket=BUCKET, Key=item["Key"])
        s3.delete_bucket(Bucket=BUCKET)
    except s3.exceptions.NoSuchBucket:
        pass


def test_fit_uploads_code_creates_job_and_streams_logs(sagemaker_env, tmp_path, capsys, direct, monkeypatch):
    import sagelaunch.launcher.common.aws.s3 as aws_s3

    fakes = sagemaker_env
    remove_default_bucket(direct("s3"))  # the check below is of a bucket our backend creates
    monkeypatch.setattr(aws_s3, "_KNOWN_BUCKETS", set())  # ... so this process must not remember it
    fakes.plan(
        "e2e-fit",
        Step("InProgress", "Starting", "Preparing the instances for training"),
        Step("InProgress", "Downloading", "Downloading the training image"),
        Step("InProgress", "Training", "Training in progress",
             logs=(("algo-1", "epoch 1 loss 0.9"), ("algo-2", "epoch 1 loss 0.8"), ("algo-1", "epoch 2 loss 0.5"))),
        Step("InProgress", "Uploading", "Uploading generated training model", logs=(("algo-2", "saved model"),)),
        Step("Completed", "Completed", "Training job completed", logs=(("algo-1", "done"),)),
    )
    spec = make_spec("e2e-fit", make_source(tmp_path / "src"))
    job = submit(spec, wait=True, logs=True)
    out = capsys.readouterr().out
    code_uri = f"s3://{BUCKET}/{spec.job_name}/source/sourcedir.tar.gz"

    # the archive holds exactly the files that ship: no .env, .git, caches or ignored *.bin
    body = direct("s3").get_object(Bucket=BUCKET, Key=f"{spec.job_name}/source/sourcedir.tar.gz")["Body"].read()
    assert archive_names(body) == SHIPPED
    # the default bucket was created with every public access blocked
    block = direct("s3").get_public_access_block(Bucket=BUCKET)["PublicAccessBlockConfiguration"]
    assert block == dict.fromkeys(["BlockPublicAcls", "IgnorePublicAcls", "BlockPublicPolicy", "RestrictPublicBuckets"], True)

    # the request that reached the server is exactly the compiled spec, pointing at the upload
    (create,) = fakes.proxy.calls("CreateTrainingJob")
    expected = replace(spec, submit_directory=code_uri, output_path=f"s3://{BUCKET}/")
    assert create.json() == json.loads(json.dumps(compile_create_training_job_request(expected)))

    stored = direct("sagemaker").describe_training_job(TrainingJobName=spec.job_name)
    assert stored["AlgorithmSpecification"]["TrainingImage"] == IMAGE
    hp = stored["HyperParameters"]
    assert json.loads(hp["sagemaker_submit_directory"]) == code_uri
    assert json.loads(hp["sagemaker_program"]) == "train.py"
    assert json.loads(hp["epochs"]) == 3
    assert {k: v for k, v in json.loads(hp["mp_parameters"]).items() if k in SMP} == SMP
    assert stored["ProfilerConfig"]["ProfilingIntervalInMilliseconds"] == 500
    assert stored["ResourceConfig"] == {"InstanceType": "ml.p4d.24xlarge", "InstanceCount": 2,
                                        "VolumeSizeInGB": 30} | {k: v for k, v in stored["ResourceConfig"].items()
                                                                 if k not in ("InstanceType", "InstanceCount", "VolumeSizeInGB")}

    # transitions and both hosts' logs, merged in time order with a host prefix
    lines = [line for line in out.splitlines() if line.startswith("[algo-")]
    assert lines == ["[algo-1] epoch 1 loss 0.9", "[algo-2] epoch 1 loss 0.8", "[algo-1] epoch 2 loss 0.5",
                     "[algo-2] saved model", "[algo-1] done"]
    for status in ("Starting", "Downloading", "Training", "Uploading", "Completed"):
        assert f" {status} - " in out
    assert out.index("Downloading - ") < out.index("[algo-1] epoch 1") < out.index("Uploading - ")

    assert isinstance(job, SageMakerTrainingJob) and job.status == "Completed"
    assert job.model_data == f"s3://{BUCKET}/{spec.job_name}/output/model.tar.gz"
    assert job.profiler_output.startswith(stored["ProfilerConfig"]["S3OutputPath"].rstrip("/"))
    assert job.profiler_output.endswith(f"/{spec.job_name}/profiler-output/")


def test_describe_list_stop_round_trip_and_attach(sagemaker_env, tmp_path, capsys):
    fakes = sagemaker_env
    fakes.plan("roundtrip", Step("InProgress", "Starting", "Preparing"), Step("InProgress", "Training", "Training"))
    spec = make_spec("roundtrip", make_source(tmp_path / "src"), profiler=None,
                     distribution={}, instance_count=1)
    job = submit(spec, wait=False)
    # one DescribeTrainingJob before the upload (is the name free? "not found"), none after: no waiting
    assert [c.status for c in fakes.proxy.calls("DescribeTrainingJob")] == [400]

    attached = attach(spec.job_name)
    assert isinstance(attached, SageMakerTrainingJob) and attached.name == spec.job_name
    assert attached.describe()["TrainingJobStatus"] == "InProgress"
    assert attached.profiler_output is None

    from sagelaunch.launcher.sagemaker.backend import list_jobs

    assert spec.job_name in [s["TrainingJobName"] for s in list_jobs(status="InProgress")]
    attached.stop()
    assert [c.json() for c in fakes.proxy.calls("StopTrainingJob")] == [{"TrainingJobName": spec.job_name}]
    assert job.status == "Stopping"
    desc = job.wait(logs=False)  # Stopped on request is a normal end: no error
    assert desc["TrainingJobStatus"] == "Stopped"
    assert "was Stopped" in capsys.readouterr().out
    assert spec.job_name in [s["TrainingJobName"] for s in list_jobs(status="Stopped")]
    assert spec.job_name not in [s["TrainingJobName"] for s in list_jobs(status="InProgress")]

    from sagelaunch.launcher.common.aws.errors import AWSError

    with pytest.raises(AWSError, match="status Stopped") as stopped_twice:
        job.stop()
    assert "Fix:" in str(stopped_twice.value)


def test_attach_unknown_job_says_so(sagemaker_env):
    from sagelaunch.launcher.common.aws.errors import AWSError

    with pytest.raises(AWSError, match="no training job named 'no-such-job-123'") as info:
        SageMakerTrainingJob.attach("no-such-job-123")
    assert "sagelaunch jobs list" in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_single_entry_point_without_source_dir(sagemaker_env, tmp_path, direct):
    script = tmp_path / "solo" / "train_solo.py"
    make_source(tmp_path / "solo")
    script.write_text("print('solo')\n")
    spec = make_spec("solo", tmp_path, source_dir=None, entry_point="train_solo.py",
                     entry_point_path=str(script), profiler=None)
    submit(spec, wait=False)
    body = direct("s3").get_object(Bucket=BUCKET, Key=f"{spec.job_name}/source/sourcedir.tar.gz")["Body"].read()
    assert archive_names(body) == ["train_solo.py"]


def test_s3_source_dir_is_used_as_is(sagemaker_env, tmp_path):
    spec = make_spec("s3-code", make_source(tmp_path / "src"), source_dir="s3://code-bucket-1/prebuilt/sourcedir.tar.gz",
                     profiler=None)
    job = submit(spec, wait=False)
    assert [c for c in sagemaker_env.proxy.calls(service="s3") if c.method == "PUT" and "sourcedir" in c.path] == []
    hp = job.describe()["HyperParameters"]
    assert json.loads(hp["sagemaker_submit_directory"]) == "s3://code-bucket-1/prebuilt/sourcedir.tar.gz"


def test_code_goes_where_the_dry_run_says(sagemaker_env, tmp_path, direct):
    """`validate --request` (the pure compile) and the upload agree on the code's location."""
    s3 = direct("s3")
    s3.create_bucket(Bucket="code-out-bucket-1", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    spec = make_spec("where-code", make_source(tmp_path / "src"), output_path="s3://code-out-bucket-1/runs")
    dry_run = json.loads(compile_create_training_job_request(spec)["HyperParameters"]["sagemaker_submit_directory"])
    submit(spec, wait=False, logs=False)
    (create,) = sagemaker_env.proxy.calls("CreateTrainingJob")
    sent = json.loads(create.json()["HyperParameters"]["sagemaker_submit_directory"])
    assert sent == dry_run == f"s3://code-out-bucket-1/{spec.job_name}/source/sourcedir.tar.gz"
    key = f"{spec.job_name}/source/sourcedir.tar.gz"
    assert archive_names(s3.get_object(Bucket="code-out-bucket-1", Key=key)["Body"].read()) == SHIPPED
    # bucket= (the SDK's code_location) wins over the output bucket
    s3.create_bucket(Bucket="code-only-bucket-1", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    other = make_spec("where-code-b", make_source(tmp_path / "src2"), output_path="s3://code-out-bucket-1/runs")
    submit(other, wait=False, logs=False, bucket="code-only-bucket-1")
    s3.head_object(Bucket="code-only-bucket-1", Key=f"{other.job_name}/source/sourcedir.tar.gz")
