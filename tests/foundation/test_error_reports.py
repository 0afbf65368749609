"""Construction errors report every independent problem, each with its value and a likely fix."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sagelaunch.estimators import PyTorch
from sagelaunch.jobspec import catalog as support
from sagelaunch.launcher.common import environment

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
SM = dict(entry_point="train.py", role=ROLE, region="us-west-2", framework_version="2.0.0",
          instance_type="ml.p4d.24xlarge")


def errors_of(**kw) -> list[dict]:
    with pytest.raises(ValidationError) as info:
        PyTorch(**kw)
    return info.value.errors(include_url=False)


def messages(errors: list[dict]) -> list[str]:
    return [e["msg"].removeprefix("Value error, ") for e in errors]


def test_misspelt_arguments_get_did_you_mean():
    (error,) = errors_of(**SM, instance_cout=2)
    assert error["type"] == "extra_forbidden" and error["loc"] == ("instance_cout",)
    assert "did you mean 'instance_count'?" in error["msg"]
    est = PyTorch(**SM)
    with pytest.raises(ValidationError, match="did you mean 'max_run'"):
        est.max_runn = 10  # assignment too
    assert not hasattr(est, "max_runn")


def test_versions_written_as_numbers_say_how_to_quote_them():
    (error,) = errors_of(**{**SM, "framework_version": 2.0})
    assert error["loc"] == ("framework_version",)
    assert "framework_version=2.0 is a number" in error["msg"] and "quote it: framework_version: '2.0.0'" in error["msg"]
    (py,) = errors_of(**SM, py_version=3.10)
    assert "py_version=3.1 is a number" in py["msg"] and "'py31'" in py["msg"]


@pytest.mark.parametrize("uri", ["s3:/bucket/out", "S3://bucket/out", "s3//bucket/out"])
def test_malformed_s3_output_path_suggests_the_fix(uri):
    for instance_type in ("ml.p4d.24xlarge", "local"):  # not silently a local folder named "s3:"
        (error,) = errors_of(**{**SM, "instance_type": instance_type}, output_path=uri)
        assert error["loc"] == ("output_path",) and "did you mean 's3://bucket/out'?" in error["msg"], error


def test_cross_field_problems_are_reported_alongside_field_errors():
    kw = {**SM, "role": None, "instance_type": "ml.p4d.24xl", "framework_version": "2.0.7", "volume_size": -1,
          "use_spot_instances": True, "subnets": ["subnet-0a"]}
    errors = errors_of(**kw)
    assert {e["loc"][0] for e in errors if e["loc"]} == {"instance_type", "volume_size"}
    cross = messages([e for e in errors if not e["loc"]])
    for needle in ("role is required", "framework_version='2.0.7'", "max_wait is required",
                   "subnets and security_group_ids go together"):
        assert sum(needle in m for m in cross) == 1, (needle, cross)
    # a check that needs an invalid field is skipped, not reported with a guessed value
    (only,) = errors_of(**SM, max_run=-5, use_spot_instances=True, max_wait=10)
    assert only["loc"] == ("max_run",) and only["input"] == -5


def test_sagemaker_jobs_need_a_region_local_jobs_do_not(monkeypatch, tmp_path):
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    no_region = {k: v for k, v in SM.items() if k != "region"}
    (error,) = errors_of(**no_region)
    assert "region is not set" in error["msg"] and "AWS_REGION" in error["msg"] and "region='us-west-2'" in error["msg"]
    assert PyTorch(**{**no_region, "instance_type": "local"}).resolved.region == support.LOCAL_DEFAULT_REGION
    with pytest.raises(ValueError, match="region is not set"):
        environment.default_region(local=False)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    assert PyTorch(**no_region).resolved.region == "eu-west-1"
