"""Names, keys and paths a job cannot run with are refused by `validate` and `fit` alike, with the same line,
before any job folder, registry record or S3 object exists (issue 24); a secret's value is never echoed; a job
file's duplicate keys are refused with the key and its lines."""

from __future__ import annotations

import re
import boto3
import pytest
from pydantic import ValidationError

from sagelaunch.jobspec.spec import InputChannel, spec_from_fields
from tests.foundation.test_job_file_hostile import HEAD, fit_refused, job_dir, refused, sagelaunch, write  # noqa: F401

SECRET = "s3cr3t-Value-42"

# each hostile field → the one line both commands answer with
REFUSED = {
    "hyperparameters: {'a=b': 1}\n":
        "hyperparameters key 'a=b' contains '=': the job receives each hyperparameter as the environment variable "
        "SM_HP_<KEY>, whose name cannot hold '='; allowed: any other characters — did you mean 'a_b'?",
    "inputs: {'..': data.txt}\n":
        "inputs channel='..' is not a channel name: a channel is the folder /opt/ml/input/data/<name>, and '..' "
        "would be that folder or its parent; allowed: a name with a letter or digit, e.g. 'train'",
    "inputs: {'.': data.txt}\n":
        "inputs channel='.' is not a channel name: a channel is the folder /opt/ml/input/data/<name>, and '.' "
        "would be that folder or its parent; allowed: a name with a letter or digit, e.g. 'train'",
    "inputs: {'a/b': data.txt}\n":
        "inputs channel='a/b' is not a channel name; allowed: 1-64 of A-Z a-z 0-9 . - _ (SageMaker's ChannelName), "
        "e.g. 'train'",
    "inputs: {train: \"data\\0.txt\"}\n": "inputs['train']='data\\x00.txt' contains a NUL character (\\x00), "
                                         "which no path can hold; allowed: text without \\x00 — remove it",
    "entry_point: \"tr\\0ain.py\"\n":
        "entry_point='tr\\x00ain.py' contains a NUL character (\\x00), which no path can hold; allowed: text "
        "without \\x00 — remove it",
    "source_dir: \"co\\0de\"\n": "source_dir='{dir}/co\\x00de' contains a NUL character (\\x00), which no path can "
                                "hold; allowed: text without \\x00 — remove it",
    "dependencies: [\"li\\0b\"]\n": "dependencies entry='li\\x00b' contains a NUL character (\\x00), which no path "
                                   "can hold; allowed: text without \\x00 — remove it",
    "entry_point: missing.py\n": "entry_point='missing.py': no such file in source_dir='{dir}/code'",
    "inputs: {" + ", ".join(f"c{i}: data.txt" for i in range(21)) + "}\n":
        "inputs has 21 channels; allowed: at most 20 (SageMaker's InputDataConfig) — put related data under one "
        "channel's prefix",
    "environment: {'A-B': x}\n": "environment key 'A-B' is not a variable name; allowed: [A-Za-z_][A-Za-z0-9_]* (at "
                                 "most 512 characters), e.g. 'MY_SETTING'",
}


def job_with(field: str, head: str = HEAD) -> str:
    """The job file HEAD with `field` set (replacing HEAD's line for that key)."""
    key = field.split(":")[0]
    return "".join(line for line in head.splitlines(keepends=True) if not line.startswith(f"{key}:")) + field


@pytest.mark.parametrize("field", list(REFUSED), ids=[f.split(":")[0] + str(i) for i, f in enumerate(REFUSED)])
def test_validate_and_fit_refuse_the_same_line_before_anything_exists(sagelaunch, job_dir, tmp_path, field):
    (job_dir / "data.txt").write_text("x\n")
    path = write(job_dir, job_with(field))
    expected = REFUSED[field].replace("{dir}", str(job_dir))
    assert refused(sagelaunch("validate", str(path), home=tmp_path / "home")) == [expected]
    # fit_refused: one line, and no job folder, no registry record
    assert fit_refused(sagelaunch("fit", str(path), "--no-wait", home=tmp_path / "home"), tmp_path / "home") == expected


def test_a_sagemaker_job_is_refused_before_any_s3_object_is_written(sagelaunch, job_dir, tmp_path, sagemaker_env):
    bucket, data = "fields-refused-before-upload", "fields-refused-data"
    s3 = boto3.client("s3")
    for name in (bucket, data):
        s3.create_bucket(Bucket=name, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.put_object(Bucket=data, Key="train/part-0", Body=b"x\n")
    remote = (HEAD.replace("instance_type: local", "instance_type: ml.m5.xlarge")
              + f"role: arn:aws:iam::123456789012:role/SageMakerRole\nregion: us-west-2\n"
                f"code_location: s3://{bucket}/code\noutput_path: s3://{bucket}/out\n")
    home = tmp_path / "home"
    for field in ("hyperparameters: {'a=b': 1}\n", f"inputs: {{'..': s3://{data}/train}}\n"):
        path = write(job_dir, job_with(field, remote))
        line = fit_refused(sagelaunch("fit", str(path), "--no-wait", home=home), home)
        assert refused(sagelaunch("validate", str(path), home=home)) == [line]
        assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0, "nothing was uploaded"
    assert not sagemaker_env.proxy.calls("CreateTrainingJob")
    # the same job without the bad field does upload its code: the check above ran before that upload
    good = write(job_dir, remote + f"inputs: {{train: s3://{data}/train}}\n")
    assert sagelaunch("fit", str(good), "--no-wait", home=home).returncode == 0
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] >= 1


def test_a_spec_made_directly_is_checked_the_same_way():
    """The local and SageMaker backends receive TrainingJobSpecs: one made without an estimator is checked too."""
    fields = dict(job_name="direct-spec", framework="pytorch", framework_version="2.0.0", py_version="py310",
                  image_uri="img", region="us-west-2", entry_point="train.py", instance_type="local")
    spec_from_fields(**fields)
    cases = [({"hyperparameters": {"a=b": 1}}, "hyperparameters key 'a=b' contains '='"),
             ({"environment": {"A-B": "x"}}, "environment key 'A-B' is not a variable name"),
             ({"source_dir": "/co\x00de"}, "source_dir='/co\\x00de' contains a NUL character"),
             ({"inputs": [{"name": "..", "uri": "/data"}]}, "channel name='..' is not a channel name")]
    for change, message in cases:
        with pytest.raises(ValidationError, match=re.escape(message)):
            spec_from_fields(**{**fields, **change})
    with pytest.raises(ValidationError, match=re.escape("channel uri='/da\\x00ta' contains a NUL")):
        InputChannel(name="train", uri="/da\x00ta")
    with pytest.raises(ValidationError) as caught:  # pydantic's own text would repeat the whole environment
        spec_from_fields(**fields, environment={"DB_PASSWORD": SECRET + "\x00"})
    assert SECRET not in str(caught.value) and "environment['DB_PASSWORD']=<hidden>" in str(caught.value)


SECRET_FIELDS = [
    f'environment: {{DB_PASSWORD: "{SECRET}\\0"}}\n',
    f"environment: {{API_TOKEN: {'9' * 600}}}\n",  # an int where text is needed: pydantic's error shows inputs
    f'environment: {{AWS_SECRET_ACCESS_KEY: "{SECRET}\\0", PLAIN: ok}}\n',
    f'hyperparameters: {{api_key: ["{SECRET}\\0"]}}\n',
]


@pytest.mark.parametrize("field", SECRET_FIELDS, ids=["password-nul", "token-not-text", "aws-secret", "hp-api-key"])
def test_a_refusal_names_a_secret_but_never_echoes_its_value(sagelaunch, job_dir, tmp_path, field):
    path = write(job_dir, job_with(field))
    for command in (("validate", str(path)), ("fit", str(path), "--no-wait")):
        done = sagelaunch(*command, home=tmp_path / "home")
        assert done.returncode == 1 and "<hidden>" in done.stderr, done
        assert SECRET not in done.stderr + done.stdout and "9" * 20 not in done.stderr, done.stderr
    assert not (tmp_path / "home" / "jobs").exists()


def test_the_python_api_never_echoes_a_secret_either():
    from sagelaunch.estimators import PyTorch

    with pytest.raises(ValidationError) as caught:
        PyTorch(entry_point="train.py", framework_version="2.0.0", instance_type="local",
                environment={"DB_PASSWORD": SECRET + "\x00", "PLAIN": "shown"})
    text = str(caught.value)
    assert "environment['DB_PASSWORD']=<hidden> contains a NUL character" in text
    assert SECRET not in text and "'PLAIN': 'shown'" in text  # only the secret is hidden
    with pytest.raises(ValidationError) as caught:
        PyTorch(entry_point="train.py", framework_version="2.0.0", instance_type="local",
                hyperparameters={"auth_token": {"nested": SECRET + "\x00"}})
    assert SECRET not in str(caught.value) and "hyperparameters['auth_token']" in str(caught.value)
    from sagelaunch.estimators import PyTorchModel

    with pytest.raises(ValueError) as caught:  # a model's env: text only, as CreateModel takes it
        PyTorchModel(model_data="s3://bucket/model.tar.gz", role="arn:aws:iam::123456789012:role/R",
                     entry_point="inference.py", framework_version="2.0.0", py_version="py310",
                     env={"API_TOKEN": 4242424242})
    assert str(caught.value) == "env['API_TOKEN']=<hidden> is int; allowed: text — quote it, e.g. env: {API_TOKEN: '1'}"


@pytest.mark.parametrize("body, line, first, key", [
    ("framework_version: '2.1.0'\n", 6, 4, "framework_version"),  # a top-level key given twice
    ("hyperparameters:\n  lr: 1\n  epochs: 2\n  lr: 3\n", 9, 7, "lr"),  # inside a mapping
    ("inputs: {train: a, train: b}\n", 6, 6, "train"),  # in flow style, on one line
])
def test_yaml_duplicate_keys_are_refused_with_the_key_and_lines(sagelaunch, job_dir, tmp_path, body, line, first, key):
    path = write(job_dir, HEAD + body)
    (problem,) = refused(sagelaunch("validate", str(path), home=tmp_path / "home"))
    assert problem.startswith(f"{path}: line {line}, column ")
    assert problem.endswith(f"key {key!r} is given twice in the same mapping (first on line {first}); YAML would "
                            "silently keep the last one — keep only the value you mean")
    assert fit_refused(sagelaunch("fit", str(path), "--no-wait", home=tmp_path / "home"), tmp_path / "home") == problem


def test_equal_keys_in_different_mappings_are_fine(sagelaunch, job_dir, tmp_path):
    path = write(job_dir, HEAD + "hyperparameters: {name: a}\ntags: [{Key: name, Value: a}]\n")
    done = sagelaunch("validate", str(path), home=tmp_path / "home")
    assert done.returncode == 0, done
