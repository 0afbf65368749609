"""Clear answers for a mistyped job name, whole job names in `jobs list`, clean failure reasons, bad bucket names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagelaunch.estimators.model import Model
from sagelaunch.launcher.local import registry
from sagelaunch.launcher.backends import attach
from sagelaunch.launcher.common.jobs import JobNotFoundError
from sagelaunch.launcher.local.failure import traceback_tail
from tests.local.conftest import unique

REPO = Path(__file__).resolve().parents[2]


def _new(name: str) -> None:
    now = registry.now()
    registry.create({"TrainingJobName": name, "TrainingJobStatus": "Completed", "SecondaryStatus": "Completed",
                     "SecondaryStatusTransitions": [], "CreationTime": now, "JobDir": "/nowhere"})


def _cli(*args: str) -> subprocess.CompletedProcess:
    """`sagelaunch …` with no AWS region or credentials anywhere, and an 80-column terminal."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull, COLUMNS="80",
               PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "sagelaunch.cli", *args], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_mistyped_local_name_without_aws_suggests_the_local_job_and_how_to_reach_sagemaker():
    name = unique("lookup-job-with-a-rather-long-name-that-does-not-fit-in-eighty-columns")
    _new(name)
    typo = name[:-1] + ("x" if name[-1] != "x" else "y")
    answer = _cli("jobs", "describe", typo)
    assert answer.returncode == 1, answer.stdout + answer.stderr
    err = " ".join(answer.stderr.split())
    assert f"no local job named '{typo}' (did you mean '{name}'?)" in err
    assert "--region" in err and "AWS_REGION" in err and "Traceback" not in answer.stderr
    listed = _cli("jobs", "list", "--backend", "local")
    assert listed.returncode == 0, listed.stderr
    assert any(name in line for line in listed.stdout.splitlines())  # whole, on one line: it can be copied


def test_name_unknown_locally_and_on_sagemaker_says_both(moto_server):
    name = unique("lookup-known")
    _new(name)
    with pytest.raises(JobNotFoundError) as missing:
        attach(name + "z", region="us-west-2")
    text = str(missing.value)
    assert f"no local job named '{name}z' (did you mean '{name}'?)" in text
    assert f"no training job named '{name}z' in us-west-2" in text


def test_traceback_tail_drops_caret_lines():
    lines = ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
             "    x = 1 / zero", "        ^^^^^^^^", "            ~~^~~~~", "ZeroDivisionError: division by zero"]
    tail = traceback_tail(lines)
    assert tail.splitlines()[-1] == "ZeroDivisionError: division by zero"
    assert not any(set(line.strip()) <= set("^~") for line in tail.splitlines())
    assert "x = 1 / zero" in tail


@pytest.mark.parametrize(("uri", "message"), [
    ("s3://b/model.tar.gz", "bucket name 'b' has 1 characters; S3 bucket names have 3 to 63"),
    ("s3://Bad_Bucket/model.tar.gz", "may hold only lowercase letters"),
])
def test_model_data_names_what_is_wrong_with_the_bucket(uri, message):
    with pytest.raises(ValueError, match=message):
        Model(model_data=uri, role="arn:aws:iam::123456789012:role/r", framework_version="2.0.0")
