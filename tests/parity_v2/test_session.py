"""The v2 surface notebooks touch beyond estimators and deploy, written the v2 way (`import sagemaker` included)
and run by the real SDK v2 and by ours (the one swap rule) against one moto server:

- `sagemaker.get_execution_role()`: a caller that is an assumed role gets the role's ARN with its IAM path, one
  whose role IAM cannot find gets the ARN without a path, a caller that is no role is refused by both;
- `Session`: default_bucket, upload_data, download_data, the S3 file helpers (and `sagemaker.s3`'s S3Uploader and
  S3Downloader), describe and delete calls;
- `predictor.delete_model()` / `delete_endpoint()`: v2's requests in v2's order (the model is not deleted by
  delete_endpoint);
- an estimator after `fit`: `output_path` (v2: s3://<default bucket>/) and the rule configs.
"""

from __future__ import annotations

import json

import pytest

from sagelaunch.jobspec.errors import SagelaunchError
from tests.fixtures.sdk_v2 import TIMESTAMP
from tests.parity_v2.test_deploy import ECHO, SETUP

ASSUME = """
import boto3
import sagemaker
iam = boto3.client("iam")
arn = "arn:aws:iam::123456789012:role/{path}" + JOB
if {create}:
    iam.create_role(RoleName=JOB, Path="/{path}", AssumeRolePolicyDocument="{{}}")
c = boto3.client("sts").assume_role(RoleArn=arn, RoleSessionName="notebook")["Credentials"]
caller = boto3.Session(aws_access_key_id=c["AccessKeyId"], aws_secret_access_key=c["SecretAccessKey"],
                       aws_session_token=c["SessionToken"], region_name="us-west-2")
RESULT = sagemaker.get_execution_role(sagemaker.Session(boto_session=caller))
"""

CASES = {
    "role-assumed-with-path": ASSUME.format(path="service-role/", create=True),
    "role-assumed-not-in-iam": ASSUME.format(path="", create=False),
    "role-caller-is-a-user": "import sagemaker\nRESULT = sagemaker.get_execution_role()\n",
    "session-s3": """
import sagemaker
sess = sagemaker.Session()
bucket = sess.default_bucket()
d = tempfile.mkdtemp(); os.makedirs(d + "/sub")
open(d + "/a.txt", "w").write("A"); open(d + "/sub/b.txt", "w").write("B")
up = sess.upload_data(d, key_prefix=JOB)
one = sess.upload_data(d + "/a.txt", bucket=bucket, key_prefix=JOB + "/single")
out = tempfile.mkdtemp()
got = sess.download_data(out, bucket, key_prefix=JOB + "/sub")
body = sess.upload_string_as_file_body("hello", bucket, JOB + "/s.txt")
RESULT = [up, one, sorted(os.path.relpath(p, out) for p in got), open(got[0]).read(), body,
          sess.read_s3_file(bucket, JOB + "/s.txt"), sorted(sess.list_s3_files(bucket, JOB)), sess.boto_region_name,
          bucket]
""",
    "s3-uploader-downloader": """
import sagemaker
from sagemaker.s3 import S3Downloader, S3Uploader
base = "s3://" + sagemaker.Session().default_bucket() + "/" + JOB
d = tempfile.mkdtemp(); open(d + "/a.csv", "w").write("1,2\\n")
up = S3Uploader.upload(d, base + "/data")
text = S3Uploader.upload_string_as_file_body("hello", base + "/note.txt")
out = tempfile.mkdtemp()
got = S3Downloader.download(base + "/data", out)
RESULT = [up, text, S3Downloader.read_file(base + "/note.txt"), sorted(S3Downloader.list(base)),
          [os.path.relpath(p, out) for p in got]]
""",
    "predictor-deletes": """
from sagemaker.pytorch import PyTorchModel
m = PyTorchModel(model_data=MODEL, role=ROLE, framework_version="2.0.1", py_version="py310", name=JOB + "-model")
p = m.deploy(1, "ml.m5.xlarge", endpoint_name=JOB, wait=False)
in_service(JOB)
p.delete_model()
p.delete_endpoint()
RESULT = [[m["ModelName"] for m in sm.list_models()["Models"] if m["ModelName"].startswith(JOB)],
          [e["EndpointName"] for e in sm.list_endpoints()["Endpoints"] if e["EndpointName"] == JOB]]
""",
    "session-deletes": """
import sagemaker
from sagemaker.pytorch import PyTorchModel
sess = sagemaker.Session()
m = PyTorchModel(model_data=MODEL, role=ROLE, framework_version="2.0.1", py_version="py310", name=JOB + "-model")
p = m.deploy(1, "ml.m5.xlarge", endpoint_name=JOB, wait=False)
described = [sess.describe_endpoint(JOB)["EndpointName"], sess.describe_endpoint_config(JOB)["EndpointConfigName"],
             sess.describe_model(JOB + "-model")["ModelName"]]
sess.delete_endpoint(JOB)
sess.delete_endpoint_config(JOB)
sess.delete_model(JOB + "-model")
RESULT = described
""",
    # the sequence of v2 calls of AWS's PyTorch deploy getting-started notebook (our own code, its calls): the
    # caller's role, upload_data to the default bucket, a PyTorch 1.5.0 model with a handler, JSON predict, and
    # sess.delete_endpoint(endpoint_name=...)
    "notebook-deploy-flow": ASSUME.format(path="service-role/", create=True).replace("RESULT = ", "role = ") + """
from sagemaker.pytorch import PyTorchModel
from sagemaker.serializers import JSONSerializer
from sagemaker.deserializers import JSONDeserializer
sess = sagemaker.Session(boto_session=caller)
model_data = sess.upload_data(path=work + "/model.tar.gz", bucket=sess.default_bucket(), key_prefix=JOB + "/model")
model = PyTorchModel(entry_point="inference.py", source_dir=src, role=role, model_data=model_data,
                     framework_version="1.5.0", py_version="py3")
predictor = model.deploy(initial_instance_count=1, instance_type="ml.c4.xlarge", serializer=JSONSerializer(),
                         deserializer=JSONDeserializer(), endpoint_name=JOB, wait=False)
in_service(JOB)
answer = predictor.predict({"inputs": [[0.5, 0.25]]})
sess.delete_endpoint(endpoint_name=predictor.endpoint_name)
RESULT = [role, model_data, answer, [e["EndpointName"] for e in sm.list_endpoints()["Endpoints"] if e["EndpointName"] == JOB]]
""",
    "estimator-after-fit": """
import sagemaker
from sagemaker.pytorch import PyTorch
from sagemaker.debugger import ProfilerRule, Rule, rule_configs
est = PyTorch(entry_point="train.py", source_dir=src, role=ROLE, framework_version="1.8.1", py_version="py3",
              instance_type="ml.p3.2xlarge", instance_count=1,
              rules=[ProfilerRule.sagemaker(rule_configs.ProfilerReport()), Rule.sagemaker(rule_configs.loss_not_decreasing())])
before = est.output_path
est.fit(wait=False, job_name=JOB)
RESULT = [before, est.output_path, est.profiler_rule_configs, est.debugger_rule_configs,
          [r.name for r in est.profiler_rules], [r.name for r in est.debugger_rules],
          est.latest_training_job.name == JOB, est.latest_job_profiler_artifacts_path(),
          est.latest_job_debugger_artifacts_path(), est.latest_training_job.rule_job_summary()]
""",
}
DELETE_AND_DESCRIBE = ("DescribeEndpoint", "DescribeEndpointConfig", "DescribeModel", "DeleteModel",
                       "DeleteEndpointConfig", "DeleteEndpoint")
S3_CALLS = ("ListObjectsV2", "ListObjects", "GetObject", "PutObject")


@pytest.fixture(scope="module")
def side(sdk_v2, sagemaker_endpoints):
    return sdk_v2([{"id": k, "code": SETUP + code, "names": {"ECHO": ECHO}} for k, code in CASES.items()])


def normal(result: dict, value):
    """`value` with the side's JOB name and generated timestamps made comparable."""
    return json.loads(TIMESTAMP.sub("<ts>", json.dumps(value).replace(result["job"], "<job>")))


def calls_after_setup(result: dict, operations: tuple[str, ...]) -> list:
    """The case's own calls of `operations` (SETUP's bucket, archive and model upload left out)."""
    calls = result["calls"]
    start = max(i for i, c in enumerate(calls) if c["operation"] == "PutObject"
                and c["params"].get("Key", "").endswith("/model.tar.gz") and c["params"]["Bucket"] == "deploy-parity")
    return [normal(result, [c["operation"], {k: v for k, v in c["params"].items() if k != "Body"}])
            for c in calls[start + 1:] if c["operation"] in operations]


@pytest.mark.parametrize("case", ["role-assumed-with-path", "role-assumed-not-in-iam"])
def test_get_execution_role_finds_the_callers_role_as_v2(side, case):
    v2, ours = side.v2[case], side.ours[case]
    assert v2["error"] is None and ours["error"] is None, (v2["error"], ours["error"])
    assert normal(ours, ours["result"]) == normal(v2, v2["result"])
    path = "service-role/" if case == "role-assumed-with-path" else ""
    assert normal(ours, ours["result"]) == f"arn:aws:iam::123456789012:role/{path}<job>"


def test_get_execution_role_refuses_a_caller_that_is_no_role(side):
    v2, ours = side.v2["role-caller-is-a-user"], side.ours["role-caller-is-a-user"]
    assert v2["error"].startswith("ValueError: The current AWS identity is not a role")
    # SagelaunchError is a ValueError, as v2's: `except ValueError` catches both
    assert issubclass(SagelaunchError, ValueError)
    assert ours["error"].startswith("SagelaunchError: get_execution_role(): the current AWS identity is not a role: "
                                    "arn:")


@pytest.mark.parametrize("case", ["session-s3", "s3-uploader-downloader"])
def test_session_s3_helpers_send_v2s_requests_and_answer_as_v2(side, case):
    v2, ours = side.v2[case], side.ours[case]
    assert v2["error"] is None and ours["error"] is None, (v2["error"], ours["error"])
    assert normal(ours, ours["result"]) == normal(v2, v2["result"])
    assert calls_after_setup(ours, S3_CALLS[:3]) == calls_after_setup(v2, S3_CALLS[:3])
    if case == "s3-uploader-downloader":
        assert normal(ours, ours["result"])[2:] == [
            "hello", ["s3://sagemaker-us-west-2-123456789012/<job>/data/a.csv",
                      "s3://sagemaker-us-west-2-123456789012/<job>/note.txt"], ["a.csv"]]
        return
    assert normal(ours, ours["result"])[2:4] == [["b.txt"], "B"]
    assert calls_after_setup(ours, S3_CALLS[:3]) == calls_after_setup(v2, S3_CALLS[:3])


@pytest.mark.parametrize("case", ["predictor-deletes", "session-deletes"])
def test_deletes_send_v2s_requests_in_v2s_order(side, case):
    v2, ours = side.v2[case], side.ours[case]
    assert v2["error"] is None and ours["error"] is None, (v2["error"], ours["error"])
    assert normal(ours, ours["result"]) == normal(v2, v2["result"])
    assert calls_after_setup(ours, DELETE_AND_DESCRIBE) == calls_after_setup(v2, DELETE_AND_DESCRIBE)
    if case == "predictor-deletes":
        assert [op for op, _ in calls_after_setup(ours, DELETE_AND_DESCRIBE)][-5:] == [
            "DescribeEndpoint", "DescribeEndpointConfig", "DeleteModel", "DeleteEndpointConfig", "DeleteEndpoint"]


def test_a_notebooks_deploy_flow_sends_v2s_requests(side):
    v2, ours = side.v2["notebook-deploy-flow"], side.ours["notebook-deploy-flow"]
    assert v2["error"] is None and ours["error"] is None, (v2["error"], ours["error"])
    assert normal(ours, ours["result"]) == normal(v2, v2["result"])
    role, model_data, answer, left = normal(ours, ours["result"])
    assert role == "arn:aws:iam::123456789012:role/service-role/<job>" and answer == {"inputs": [[0.5, 0.25]]}
    assert model_data == "s3://sagemaker-us-west-2-123456789012/<job>/model/model.tar.gz" and left == []
    for operation in ("CreateModel", "CreateEndpointConfig", "CreateEndpoint", "InvokeEndpoint", "DeleteEndpoint"):
        assert calls_after_setup(ours, (operation,)) == calls_after_setup(v2, (operation,)), operation
    [model] = calls_after_setup(ours, ("CreateModel",))
    assert model[1]["PrimaryContainer"]["Image"].endswith("/pytorch-inference:1.5.0-cpu-py3")


def test_estimator_attributes_after_fit_are_v2s(side):
    v2, ours = side.v2["estimator-after-fit"], side.ours["estimator-after-fit"]
    assert v2["error"] is None and ours["error"] is None, (v2["error"], ours["error"])
    assert normal(ours, ours["result"]) == normal(v2, v2["result"])
    assert ours["result"][1] == "s3://sagemaker-us-west-2-123456789012/"
    assert normal(ours, ours["result"][7:9]) == ["s3://sagemaker-us-west-2-123456789012/<job>/profiler-output",
                                                 "s3://sagemaker-us-west-2-123456789012/<job>/debug-output"]
