"""Job settings, TrainingInput, role and session written the v2 way send the same CreateTrainingJob from the
real SDK v2 and from ours (one moto server, one batch): every case's request is compared exactly, less the
differences README lists (`without_documented_differences`). Code archives built with `dependencies` and
`git_config` are compared too (their file names), the git repository being a bare one made by the case and
reached offline through git's `url.<local>.insteadOf` (both SDKs run `git clone https://…`)."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.sdk_v2 import requests, without_documented_differences

PRELUDE = """
import io, json, os, subprocess, tarfile, tempfile
import boto3
s3 = boto3.client("s3", region_name="us-west-2")
for bucket in ("parity-data", "parity-code"):
    try:
        s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass
for key in ("train/a.csv", "test/b.csv", "model/model.tar.gz", "manifest/data.manifest"):
    s3.put_object(Bucket="parity-data", Key=key, Body=b"x")
src = tempfile.mkdtemp()
open(os.path.join(src, "train.py"), "w").write("print('hi')\\n")

def archive_names(est):
    uri = json.loads(est.latest_training_job.describe()["HyperParameters"]["sagemaker_submit_directory"])
    bucket, _, key = uri[5:].partition("/")
    body = boto3.client("s3", region_name="us-west-2").get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body)) as tar:
        return [uri.replace(JOB, "<job>"), sorted(m.name for m in tar.getmembers() if m.isfile())]

from sagemaker.pytorch import PyTorch
from sagemaker.inputs import TrainingInput, ShuffleConfig
from sagemaker.instance_group import InstanceGroup
BASE = dict(entry_point="train.py", source_dir=src, role=ROLE, framework_version="2.0.0", py_version="py310",
            instance_type="ml.g5.xlarge", instance_count=1)
"""


def _case(case_id: str, body: str) -> dict:
    return {"id": case_id, "code": PRELUDE + body}


def _fit(kwargs: str, inputs: str = "", base: str = "BASE", result: str = "") -> str:
    return f"est = PyTorch(**{{**{base}, {kwargs}}})\nest.fit({inputs + ', ' if inputs else ''}wait=False, job_name=JOB)\n" \
           + result


GROUPS = 'base = {k: v for k, v in BASE.items() if k not in ("instance_type", "instance_count")}\n'
TWO_GROUPS = '"instance_groups": [InstanceGroup("gpu", "ml.g5.xlarge", 2), InstanceGroup("cpu", "ml.c5.xlarge", 1)]'
MAKE_DEPENDENCIES = """
deps = tempfile.mkdtemp()
os.makedirs(os.path.join(deps, "shared", "inner"))
open(os.path.join(deps, "shared", "__init__.py"), "w").write("")
open(os.path.join(deps, "shared", "inner", "tool.py"), "w").write("X = 1\\n")
open(os.path.join(deps, "helper.py"), "w").write("Y = 2\\n")
"""
MAKE_REPOSITORY = """
work = tempfile.mkdtemp()
repo, seed = os.path.join(work, "project.git"), os.path.join(work, "seed")
git = lambda *args, cwd=None: subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                                             cwd=cwd, check=True, capture_output=True)
git("init", "-q", "--bare", repo)
git("init", "-q", seed)
os.makedirs(os.path.join(seed, "src")); os.makedirs(os.path.join(seed, "shared"))
open(os.path.join(seed, "src", "train.py"), "w").write("print('from git')\\n")
open(os.path.join(seed, "train_root.py"), "w").write("print('root')\\n")
open(os.path.join(seed, "shared", "util.py"), "w").write("Z = 3\\n")
git("add", "-A", cwd=seed); git("commit", "-qm", "one", cwd=seed)
git("branch", "-M", "main", cwd=seed)
first = subprocess.run(["git", "rev-parse", "HEAD"], cwd=seed, capture_output=True, text=True).stdout.strip()
git("checkout", "-qb", "feature", cwd=seed)
open(os.path.join(seed, "src", "extra.py"), "w").write("E = 1\\n")
git("add", "-A", cwd=seed); git("commit", "-qm", "two", cwd=seed)
git("push", "-q", repo, "main", "feature", cwd=seed)
URL = "https://git.example.com/team/project.git"
os.environ.update(GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0=f"url.file://{repo}.insteadOf", GIT_CONFIG_VALUE_0=URL)
"""
UNSET_GIT = 'for k in ("GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"): os.environ.pop(k)\n'
ROLE_WITH_PATH = """
iam = boto3.client("iam", region_name="us-west-2")
try:
    iam.create_role(RoleName="AmazonSageMaker-ExecutionRole-Parity", Path="/service-role/",
                    AssumeRolePolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}))
except iam.exceptions.EntityAlreadyExistsException:
    pass
"""

CASES = [
    _case("metric-definitions", _fit('"metric_definitions": [{"Name": "loss", "Regex": "loss=([0-9.]+)"}, '
                                     '{"Name": "acc", "Regex": "acc=([0-9.]+)"}]')),
    _case("input-mode-fastfile", _fit('"input_mode": "FastFile"', '"s3://parity-data/train"')),
    _case("input-mode-pipe", _fit('"input_mode": "Pipe"', '"s3://parity-data/train"')),
    _case("metrics-off", _fit('"enable_sagemaker_metrics": False')),
    _case("metrics-none", _fit('"enable_sagemaker_metrics": None')),
    _case("metrics-image-only", _fit('"framework_version": None, "py_version": None, "image_uri": '
                                     '"763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0-gpu-py310"')),
    _case("keep-alive", _fit('"keep_alive_period_in_seconds": 600')),
    _case("max-retry", _fit('"max_retry_attempts": 3')),
    _case("container-entry", _fit('"container_entry_point": ["python", "-m", "mytrain"], '
                                  '"container_arguments": ["--epochs", "3"]')),
    _case("output-uncompressed", _fit('"disable_output_compression": True')),
    _case("tags-dict", _fit('"tags": {"team": "ml", "project": "parity"}')),
    _case("tags-list", _fit('"tags": [{"Key": "team", "Value": "ml"}]')),
    _case("code-location", _fit('"code_location": "s3://parity-code/code-prefix"', result="RESULT = archive_names(est)")),
    _case("code-location-bucket", _fit('"code_location": "s3://parity-code"', result="RESULT = archive_names(est)")),
    _case("dependencies", MAKE_DEPENDENCIES + _fit(
        '"dependencies": [os.path.join(deps, "shared"), os.path.join(deps, "helper.py")]',
        result="RESULT = archive_names(est)")),
    _case("dependencies-lone-entry", MAKE_DEPENDENCIES + _fit(
        '"entry_point": os.path.join(src, "train.py"), "source_dir": None, "dependencies": [os.path.join(deps, "shared")]',
        result="RESULT = archive_names(est)")),
    _case("git-source-dir-branch", MAKE_REPOSITORY + "try:\n    " + _fit(
        '"source_dir": "src", "git_config": {"repo": URL, "branch": "feature"}, "dependencies": ["shared"]',
        result="RESULT = archive_names(est)").replace("\n", "\n    ") + "\nfinally:\n    " + UNSET_GIT),
    _case("git-root-commit", MAKE_REPOSITORY + "try:\n    " + _fit(
        '"entry_point": "train_root.py", "source_dir": None, "git_config": {"repo": URL, "branch": "main", '
        '"commit": first}', result="RESULT = archive_names(est)").replace("\n", "\n    ")
        + "\nfinally:\n    " + UNSET_GIT),
    _case("model-uri", _fit('"model_uri": "s3://parity-data/model/model.tar.gz"', '"s3://parity-data/train"')),
    _case("model-channel-name", _fit('"model_uri": "s3://parity-data/model/model.tar.gz", '
                                     '"model_channel_name": "pretrained"')),
    _case("instance-groups", GROUPS + _fit(TWO_GROUPS, base="base")),
    _case("instance-groups-channel", GROUPS + _fit(
        TWO_GROUPS, '{"train": TrainingInput("s3://parity-data/train", instance_groups=["gpu"]), '
                    '"test": TrainingInput("s3://parity-data/test", instance_groups=["gpu", "cpu"])}', base="base")),
    _case("role-name-with-path", ROLE_WITH_PATH + _fit('"role": "AmazonSageMaker-ExecutionRole-Parity"')),
    _case("session-region", "import boto3\nfrom sagemaker.session import Session\n"
          'sess = Session(boto_session=boto3.Session(region_name="eu-west-1"))\n'
          + _fit('"sagemaker_session": sess', result="RESULT = [sess.boto_region_name, sess.default_bucket()]")),
    _case("session-bucket", "from sagemaker.session import Session\n"
          'sess = Session(default_bucket="parity-code")\n'
          + _fit('"sagemaker_session": sess', result="RESULT = archive_names(est)")),
    _case("session-bucket-prefix", "from sagemaker.session import Session\n"
          'sess = Session(default_bucket_prefix="team-a")\n'
          + _fit('"sagemaker_session": sess', result="RESULT = archive_names(est)")),
    _case("session-upload-data", "from sagemaker.session import Session\nsess = Session()\n"
          'data = tempfile.mkdtemp(); os.makedirs(os.path.join(data, "sub"))\n'
          'open(os.path.join(data, "a.csv"), "w").write("1\\n"); open(os.path.join(data, "sub", "b.csv"), "w").write("2\\n")\n'
          'uri = sess.upload_data(data, key_prefix="uploaded/train")\n'
          'one = sess.upload_data(os.path.join(data, "a.csv"), bucket="parity-data", key_prefix="one")\n'
          + _fit('"sagemaker_session": sess', "uri", result="RESULT = [uri, one]")),
    # TrainingInput: every v2 argument, by position and by name
    _case("input-positional-distribution", _fit("", 'TrainingInput("s3://parity-data/train", "ShardedByS3Key")')),
    _case("input-all-positional", _fit("", 'TrainingInput("s3://parity-data/train", "FullyReplicated", "Gzip", '
                                           '"text/csv", "RecordIO", "S3Prefix", None, "Pipe", None, None, ShuffleConfig(7))')),
    _case("input-compression-pipe", _fit("", '{"train": TrainingInput("s3://parity-data/train", compression="Gzip", '
                                             'input_mode="Pipe")}')),
    _case("input-content-wrapping", _fit("", 'TrainingInput("s3://parity-data/train", content_type="text/csv", '
                                             'record_wrapping="RecordIO")')),
    _case("input-augmented-manifest", _fit("", 'TrainingInput("s3://parity-data/manifest/data.manifest", '
                                               's3_data_type="AugmentedManifestFile", attribute_names=["source-ref", "label"])')),
    _case("input-manifest", _fit("", 'TrainingInput("s3://parity-data/manifest/data.manifest", s3_data_type="ManifestFile")')),
    _case("input-shuffle", _fit("", 'TrainingInput("s3://parity-data/train", shuffle_config=ShuffleConfig(seed=42))')),
    _case("input-lone-mode", _fit("", 'TrainingInput("s3://parity-data/train", input_mode="FastFile")')),
    _case("input-dict-mode", _fit("", '{"train": TrainingInput("s3://parity-data/train", input_mode="Pipe"), '
                                      '"test": "s3://parity-data/test"}')),
    _case("input-access-configs", _fit("", 'TrainingInput("s3://parity-data/model", model_access_config={"AcceptEula": True}, '
                                           'hub_access_config={"HubContentArn": "arn:aws:sagemaker:us-west-2:123456789012:'
                                           'hub-content/hub/Model/m/1.0.0"})')),
    _case("input-dict-strings", _fit("", '{"train": "s3://parity-data/train", "test": "s3://parity-data/test"}')),
    # many settings at once: none of them may disturb another
    _case("everything-at-once", MAKE_DEPENDENCIES + _fit(
        '"metric_definitions": [{"Name": "loss", "Regex": "loss=([0-9.]+)"}], "input_mode": "FastFile", '
        '"keep_alive_period_in_seconds": 120, "max_retry_attempts": 2, "tags": {"team": "ml"}, '
        '"code_location": "s3://parity-code/all", "dependencies": [os.path.join(deps, "helper.py")], '
        '"model_uri": "s3://parity-data/model/model.tar.gz", "disable_output_compression": True, '
        '"output_path": "s3://parity-data/out", "environment": {"A": "1"}, "max_run": 3600',
        '{"train": TrainingInput("s3://parity-data/train", "ShardedByS3Key", input_mode="Pipe"), '
        '"test": "s3://parity-data/test"}', result="RESULT = archive_names(est)")),
]
# refused by both: v2 passes TargetAttributeName (AutoML's) on to CreateTrainingJob, which botocore rejects
REFUSED = {
    "input-target-attribute": (_fit("", 'TrainingInput("s3://parity-data/train", target_attribute_name="y")'),
                               "ParamValidationError", "is for SageMaker AutoML jobs"),
}
CASES += [_case(case_id, code) for case_id, (code, _, _) in REFUSED.items()]
# ProfilerConfig/DebugHookConfig defaults belong to the profiler's parity (tests/parity_v2's request grid)
NOT_COMPARED_HERE = ("ProfilerConfig", "DebugHookConfig")


@pytest.fixture(scope="module")
def side(sdk_v2):
    return sdk_v2(CASES)  # one batch: each call starts two interpreters


def test_job_settings_send_the_same_requests_as_sdk_v2(side):
    errors = {c["id"]: (side.v2[c["id"]]["error"], side.ours[c["id"]]["error"]) for c in CASES
              if c["id"] not in REFUSED and (side.v2[c["id"]]["error"] or side.ours[c["id"]]["error"])}
    assert not errors, json.dumps(errors, indent=1)
    for case_id, (_, v2_error, our_error) in REFUSED.items():
        assert v2_error in side.v2[case_id]["error"] and our_error in side.ours[case_id]["error"]
        assert not requests(side.ours[case_id], "CreateTrainingJob")  # refused before anything is sent
    mismatches = {}
    for case in (c for c in CASES if c["id"] not in REFUSED):
        v2, ours = side.v2[case["id"]], side.ours[case["id"]]
        [v2_request], [our_request] = requests(v2, "CreateTrainingJob"), requests(ours, "CreateTrainingJob")
        our_request, v2_request = without_documented_differences(our_request, v2_request)
        for key in NOT_COMPARED_HERE:
            v2_request.pop(key, None), our_request.pop(key, None)
        if our_request != v2_request or ours["result"] != v2["result"]:
            mismatches[case["id"]] = {"v2": v2_request, "ours": our_request, "v2_result": v2["result"],
                                      "our_result": ours["result"]}
    compared = len(CASES) - len(REFUSED)
    print(f"v2 settings parity: {compared - len(mismatches)} of {compared} cases send the same request, "
          f"{len(REFUSED)} refused by both")
    assert not mismatches, json.dumps(mismatches, indent=1)[:20000]


def test_cases_exercise_what_they_name(side):
    """The settings reach the request at all (a case whose setting vanished on both sides would still match)."""
    req = {i: requests(r, "CreateTrainingJob")[0] for i, r in side.ours.items() if i not in REFUSED}
    assert req["keep-alive"]["ResourceConfig"]["KeepAlivePeriodInSeconds"] == 600
    assert [g["InstanceGroupName"] for g in req["instance-groups"]["ResourceConfig"]["InstanceGroups"]] == ["gpu", "cpu"]
    assert req["role-name-with-path"]["RoleArn"] == (
        "arn:aws:iam::123456789012:role/service-role/AmazonSageMaker-ExecutionRole-Parity")
    assert req["input-shuffle"]["InputDataConfig"][0]["ShuffleConfig"] == {"Seed": 42}
    assert req["dependencies"]["HyperParameters"]["sagemaker_program"] == '"train.py"'
    assert req["session-region"]["AlgorithmSpecification"]["TrainingImage"].startswith("763104351884.dkr.ecr.eu-west-1")
