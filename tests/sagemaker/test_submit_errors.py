"""Bad input and rejected submissions: one clear message (cause + fix), nothing left behind."""

from __future__ import annotations

import boto3
import pytest

from sagelaunch.launcher.common.aws.errors import AWSError
from sagelaunch.launcher.sagemaker.backend import submit
from tests.sagemaker.jobspecs import channel, make_source, make_spec

pytestmark = pytest.mark.timeout(90)  # a wait that never ends must fail, not hang

BUCKET = "sagemaker-us-west-2-123456789012"


def _no_traceback_chain(error: BaseException) -> None:
    assert error.__cause__ is None and error.__suppress_context__, "the botocore error must not be chained"


def test_missing_role_is_rejected_before_any_request(sagemaker_env, tmp_path):
    with pytest.raises(ValueError, match="role is required") as info:
        submit(make_spec("no-role", make_source(tmp_path / "src"), role=None))
    assert "instance_type='local'" in str(info.value)
    assert sagemaker_env.proxy.calls() == []


def test_missing_input_is_named_and_nothing_is_uploaded(sagemaker_env, tmp_path):
    s3 = boto3.client("s3", region_name="us-west-2")
    s3.create_bucket(Bucket="inputs-bucket-1", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.put_object(Bucket="inputs-bucket-1", Key="train/part-0.csv", Body=b"1,2\n")
    sagemaker_env.proxy.reset()
    spec = make_spec("no-input", make_source(tmp_path / "src"),
                     inputs=(channel("train", "s3://inputs-bucket-1/train"), channel("test", "s3://inputs-bucket-1/tset")))
    with pytest.raises(AWSError) as info:
        submit(spec)
    assert "input channel 'test' is missing" in str(info.value) and "s3://inputs-bucket-1/tset" in str(info.value)
    assert "Fix:" in str(info.value)
    assert [c for c in sagemaker_env.proxy.calls() if c.method == "PUT"] == []
    assert sagemaker_env.proxy.calls("CreateTrainingJob") == []


def test_local_input_on_sagemaker_says_how_to_fix(sagemaker_env, tmp_path):
    spec = make_spec("local-input", make_source(tmp_path / "src"), inputs=(channel("train", str(tmp_path)),))
    with pytest.raises(ValueError, match=r"inputs\['train'\].*not in S3.*aws s3 cp"):
        submit(spec)


@pytest.mark.parametrize(
    ("code", "message", "cause", "fix"),
    [
        ("ValidationException", "1 validation error: HyperParameters too long", "rejected as invalid", "sagelaunch validate"),
        ("ValidationException", "Could not assume role arn:aws:iam::123456789012:role/SageMakerRole",
         "cannot use the execution role", "sagemaker.amazonaws.com"),
        ("AccessDeniedException", "User is not authorized to perform: sagemaker:CreateTrainingJob",
         "access denied", "grant the missing permission"),
        ("ResourceLimitExceeded", "The account-level service limit 'ml.p4d.24xlarge for training job usage' is 0",
         "quota", "Service Quotas"),
    ],
)
def test_rejected_create_training_job(sagemaker_env, tmp_path, code, message, cause, fix):
    fakes = sagemaker_env
    spec = make_spec(f"rejected-{code[:6].lower()}", make_source(tmp_path / "src"))
    fakes.proxy.inject("error", action="CreateTrainingJob", code=code, message=message)
    with pytest.raises(AWSError) as info:
        submit(spec)
    text = str(info.value)
    assert f"create training job {spec.job_name}" in text
    assert message in text and cause in text and fix in text
    # what was uploaded and where, and that it was cleaned up
    key = f"{spec.job_name}/source/sourcedir.tar.gz"
    assert f"s3://{BUCKET}/{key}" in text and "was removed again" in text
    listed = boto3.client("s3", region_name="us-west-2").list_objects_v2(Bucket=BUCKET, Prefix=spec.job_name)
    assert listed.get("KeyCount", 0) == 0
    assert info.value.code == code
    _no_traceback_chain(info.value)


def test_bad_job_name_is_rejected_offline(sagemaker_env, tmp_path):
    spec = make_spec("x", make_source(tmp_path / "src"), job_name="bad_name_with_underscores")
    with pytest.raises(ValueError, match="did you mean 'bad-name-with-underscores'"):
        submit(spec)
    assert sagemaker_env.proxy.calls() == []


def test_entry_point_missing_from_source_dir(sagemaker_env, tmp_path):
    spec = make_spec("no-entry", make_source(tmp_path / "src"), entry_point="trian.py")
    with pytest.raises(ValueError, match="entry_point='trian.py' is not among the files"):
        submit(spec)
    assert sagemaker_env.proxy.calls("CreateTrainingJob") == []


@pytest.mark.parametrize("interruption", [KeyboardInterrupt, RuntimeError])
def test_interrupted_create_training_job_removes_the_code(sagemaker_env, tmp_path, interruption):
    """Ctrl-C (or any other exception) during CreateTrainingJob still removes the uploaded archive."""
    from sagelaunch.launcher.common.aws import clients

    spec = make_spec(f"interrupted-{interruption.__name__[:5].lower()}", make_source(tmp_path / "src"))

    def interrupt(**_):
        raise interruption("interrupted while sending CreateTrainingJob")

    events = clients.client("sagemaker", "us-west-2").meta.events  # the cached client submit() uses
    events.register_first("before-send.sagemaker.CreateTrainingJob", interrupt, unique_id="test-interrupt")
    try:
        with pytest.raises(interruption, match="interrupted while sending"):
            submit(spec, wait=False)
    finally:
        events.unregister("before-send.sagemaker.CreateTrainingJob", unique_id="test-interrupt")
    assert [c for c in sagemaker_env.proxy.calls() if c.method == "PUT"]  # the code had been uploaded…
    listed = boto3.client("s3", region_name="us-west-2").list_objects_v2(Bucket=BUCKET, Prefix=spec.job_name)
    assert listed.get("KeyCount", 0) == 0  # …and is gone again
    assert sagemaker_env.proxy.calls("CreateTrainingJob") == []


def test_interruption_after_sagemaker_took_the_job_keeps_its_code(sagemaker_env, tmp_path):
    """Ctrl-C once CreateTrainingJob reached SageMaker: the job exists and needs its code, so it stays."""
    from sagelaunch.launcher.common.aws import clients

    spec = make_spec("interrupted-after", make_source(tmp_path / "src"))

    def interrupt(**_):
        raise KeyboardInterrupt("interrupted while reading the CreateTrainingJob answer")

    events = clients.client("sagemaker", "us-west-2").meta.events
    events.register_first("after-call.sagemaker.CreateTrainingJob", interrupt, unique_id="test-interrupt-after")
    try:
        with pytest.raises(KeyboardInterrupt):
            submit(spec, wait=False)
    finally:
        events.unregister("after-call.sagemaker.CreateTrainingJob", unique_id="test-interrupt-after")
    assert len(sagemaker_env.proxy.calls("CreateTrainingJob")) == 1
    listed = boto3.client("s3", region_name="us-west-2").list_objects_v2(Bucket=BUCKET, Prefix=spec.job_name)
    assert listed.get("KeyCount", 0) == 1  # the job's sourcedir.tar.gz is still there
