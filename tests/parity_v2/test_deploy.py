"""deploy / create_model written the v2 way send the same CreateModel, CreateEndpointConfig and CreateEndpoint
from the real SDK v2 and from ours (imports swapped), against one moto server; the repacked archives hold the
same files; predictions through InvokeEndpoint send the same headers and bodies and read the same answers.

Generated names (`pytorch-inference-<ts>`, the JOB of each side) are normalised by `requests`; nothing else is.
moto's endpoint gaps (Graviton types, Creating → InService, an InvokeEndpoint that runs the archive's handler)
are closed in tests/fixtures/endpoint_fakes.py. Every case uses wait=False where v2 would sleep 30 s per poll;
the endpoint is made InService by describing it, as the fake allows.
"""

from __future__ import annotations

import json

import pytest

from tests.fixtures.sdk_v2 import requests, without_documented_differences

SETUP = '''
import io, json, logging, os, tarfile, tempfile, boto3
REGION = "us-west-2"
s3 = boto3.client("s3", region_name=REGION)
sm = boto3.client("sagemaker", region_name=REGION)
work = tempfile.mkdtemp()
with tarfile.open(work + "/model.tar.gz", "w:gz") as t:
    for name, text in (("weights.bin", "w"), ("config/params.json", "{}")):
        data = text.encode(); info = tarfile.TarInfo(name); info.size = len(data); t.addfile(info, io.BytesIO(data))
try:
    s3.create_bucket(Bucket="deploy-parity", CreateBucketConfiguration={"LocationConstraint": REGION})
except Exception:
    pass
s3.upload_file(work + "/model.tar.gz", "deploy-parity", JOB + "/model.tar.gz")
MODEL = "s3://deploy-parity/" + JOB + "/model.tar.gz"
src = os.path.join(work, "src"); os.makedirs(src + "/sub"); lib = os.path.join(work, "mylib"); os.makedirs(lib)
open(src + "/inference.py", "w").write(ECHO)
open(src + "/sub/helper.py", "w").write("X = 1\\n")
open(src + "/train.py", "w").write("print('train')\\n")
open(lib + "/util.py", "w").write("Y = 2\\n")

def archive_of(endpoint):
    model = sm.describe_endpoint_config(EndpointConfigName=endpoint)["ProductionVariants"][0]["ModelName"]
    url = sm.describe_model(ModelName=model)["PrimaryContainer"]["ModelDataUrl"]
    bucket, key = url[len("s3://"):].split("/", 1)
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(body)) as t:
        return sorted(m.name.lstrip("./") for m in t.getmembers() if m.isfile())

def in_service(endpoint):  # the fake's endpoints are Creating until described once
    sm.describe_endpoint(EndpointName=endpoint)
    assert sm.describe_endpoint(EndpointName=endpoint)["EndpointStatus"] == "InService"

def trained(est):
    est.fit(wait=False, job_name=JOB)
    url = est.latest_training_job.describe()["ModelArtifacts"]["S3ModelArtifacts"]
    bucket, key = url[len("s3://"):].split("/", 1)
    s3.upload_file(work + "/model.tar.gz", bucket, key)  # what the training container would have uploaded
    return est
'''

# a serving handler without torch: answers with what it was sent, in the type asked for
ECHO = '''
import json
def model_fn(model_dir, context=None):
    return "echo"
def input_fn(body, content_type, context=None):
    return body.encode() if isinstance(body, str) else body, content_type
def predict_fn(data, model, context=None):
    return data
def output_fn(prediction, accept, context=None):
    body, content_type = prediction
    if accept == "application/json" and content_type != "application/json":
        return json.dumps({"content_type": content_type, "bytes": len(body)}), accept
    return body, accept
'''

PT = "from sagemaker.pytorch import PyTorchModel\n"
TF = "from sagemaker.tensorflow import TensorFlowModel\n"
CASES = {
    # PyTorchModel: v2's positions, then keywords; with and without entry_point; CPU, GPU, Graviton
    "pt-positional-repack": PT + """
m = PyTorchModel(MODEL, ROLE, "inference.py", "2.0.0", "py310", source_dir=src)
p = m.deploy(1, "ml.m5.xlarge", None, None, None, JOB, wait=False)
RESULT = archive_of(JOB)
""",
    "pt-keyword-plain-gpu": PT + """
m = PyTorchModel(model_data=MODEL, role=ROLE, framework_version="2.0.0", py_version="py310")
p = m.deploy(initial_instance_count=2, instance_type="ml.g5.xlarge", wait=False)
RESULT = [p.content_type, list(p.accept), m.name == sm.describe_endpoint_config(EndpointConfigName=p.endpoint_name)["ProductionVariants"][0]["ModelName"]]
""",
    "pt-graviton-entry-only": PT + """
os.chdir(src)
m = PyTorchModel(model_data=MODEL, role=ROLE, entry_point="inference.py", framework_version="2.0.0", py_version="py310")
p = m.deploy(initial_instance_count=1, instance_type="ml.c7g.4xlarge", endpoint_name=JOB, wait=False)
RESULT = archive_of(JOB)
""",
    "pt-options": PT + """
m = PyTorchModel(MODEL, ROLE, "inference.py", "2.1.0", "py310", source_dir=src, dependencies=[lib],
                 model_server_workers=2, env={"MY_FLAG": "1"}, name=JOB + "-model", container_log_level=logging.DEBUG,
                 vpc_config={"Subnets": ["subnet-0123abcd"], "SecurityGroupIds": ["sg-0123abcd"]},
                 model_kms_key="arn:aws:kms:us-west-2:123456789012:key/0000-2222")
p = m.deploy(1, "ml.m5.xlarge", endpoint_name=JOB, tags={"team": "ml"}, wait=False,
             kms_key="arn:aws:kms:us-west-2:123456789012:key/0000-1111", volume_size=30,
             model_data_download_timeout=600, container_startup_health_check_timeout=600)
RESULT = archive_of(JOB)
""",
    # TensorFlowModel: TF Serving images, no script-mode variables; repack with entry_point
    "tf-plain": TF + """
m = TensorFlowModel(model_data=MODEL, role=ROLE, framework_version="2.13.0")
p = m.deploy(1, "ml.m5.xlarge", wait=False)
RESULT = [p.content_type, list(p.accept)]
""",
    "tf-positional-graviton-repack": TF + """
m = TensorFlowModel(MODEL, ROLE, "inference.py", None, "2.16.1", logging.WARNING, source_dir=src)
p = m.deploy(1, "ml.c7g.xlarge", endpoint_name=JOB, wait=False)
RESULT = archive_of(JOB)
""",
    "tf-gpu-version-map": TF + """
m = TensorFlowModel(model_data=MODEL, role=ROLE, framework_version="2.12.0")
p = m.deploy(initial_instance_count=1, instance_type="ml.g5.2xlarge", endpoint_name=JOB, wait=False)
""",
    # estimators: the trained model, repacked with the training code (PyTorch) or served as is (TensorFlow)
    "est-pt-training-code": """
from sagemaker.pytorch import PyTorch
est = trained(PyTorch(entry_point="train.py", source_dir=src, role=ROLE, framework_version="2.0.0", py_version="py310",
                      instance_type="ml.m5.xlarge", instance_count=1))
p = est.deploy(1, "ml.m5.xlarge", wait=False)
RESULT = archive_of(p.endpoint_name)
""",
    "est-pt-entry-graviton": """
from sagemaker.pytorch import PyTorch
est = trained(PyTorch(entry_point="train.py", source_dir=src, role=ROLE, framework_version="2.0.0", py_version="py310",
                      instance_type="ml.m5.xlarge", instance_count=1, base_job_name="sentiment"))
p = est.deploy(initial_instance_count=1, instance_type="ml.c7g.4xlarge", endpoint_name=JOB, model_name=JOB + "-m",
               entry_point="inference.py", wait=False)
RESULT = archive_of(JOB)
""",
    "est-pt-create-model": """
from sagemaker.pytorch import PyTorch
est = trained(PyTorch(entry_point="train.py", source_dir=src, role=ROLE, framework_version="2.0.0", py_version="py310",
                      instance_type="ml.m5.xlarge", instance_count=1))
m = est.create_model(model_server_workers=2, entry_point="inference.py")
p = m.deploy(1, "ml.m5.xlarge", endpoint_name=JOB, wait=False)
RESULT = [type(m).__name__, m.entry_point, archive_of(JOB)]
""",
    "est-tf": """
from sagemaker.tensorflow import TensorFlow
est = trained(TensorFlow(entry_point="train.py", source_dir=src, role=ROLE, framework_version="2.13.0", py_version="py310",
                         instance_type="ml.m5.xlarge", instance_count=1))
p = est.deploy(1, "ml.m5.xlarge", wait=False)
""",
    "est-tf-create-model-entry": """
from sagemaker.tensorflow import TensorFlow
est = trained(TensorFlow(entry_point="train.py", source_dir=src, role=ROLE, framework_version="2.13.0", py_version="py310",
                         instance_type="ml.m5.xlarge", instance_count=1))
m = est.create_model(entry_point="inference.py", source_dir=src)
p = m.deploy(1, "ml.m5.xlarge", endpoint_name=JOB, wait=False)
RESULT = [type(m).__name__, archive_of(JOB)]
""",
    # predictions: each serializer's ContentType/Accept and body, answered by the archive's own handler
    "predict-serializers": PT + """
from sagemaker.serializers import CSVSerializer, JSONSerializer, NumpySerializer, IdentitySerializer
from sagemaker.deserializers import CSVDeserializer, JSONDeserializer, NumpyDeserializer, BytesDeserializer, StringDeserializer
import numpy as np
m = PyTorchModel(MODEL, ROLE, "inference.py", "2.0.0", "py310", source_dir=src)
p = m.deploy(1, "ml.m5.xlarge", JSONSerializer(), JSONDeserializer(), endpoint_name=JOB, wait=False)
in_service(JOB)
RESULT = [p.predict({"inputs": ["a", "b"], "x": np.array([1, 2])})]
p.serializer, p.deserializer = CSVSerializer(), CSVDeserializer()
RESULT.append(p.predict([[1, 2.5, "x"], [3, 4, "y"]]))
p.serializer, p.deserializer = NumpySerializer(), NumpyDeserializer()
RESULT.append(p.predict(np.arange(6, dtype="float32").reshape(2, 3)).tolist())
RESULT.append(p.predict([[1, 2], [3, 4]]).tolist())
p.serializer, p.deserializer = IdentitySerializer("text/plain"), StringDeserializer(accept="text/plain")
RESULT.append(p.predict(b"raw bytes"))
p.deserializer = BytesDeserializer(accept="application/json")
RESULT.append(p.predict(b"raw").decode())
RESULT.append(p.predict(b"x", initial_args={"ContentType": "application/x-custom", "Accept": "application/json"}).decode())
""",
    "predict-pytorch-default-numpy": PT + """
import numpy as np
m = PyTorchModel(MODEL, ROLE, "inference.py", "2.0.0", "py310", source_dir=src)
p = m.deploy(1, "ml.m5.xlarge", endpoint_name=JOB, wait=False)
in_service(JOB)
RESULT = p.predict(np.array([[0.5, 1.5]])).tolist()
""",
}
CREATE_CALLS = ("CreateModel", "CreateEndpointConfig", "CreateEndpoint")


@pytest.fixture(scope="module")
def side(sdk_v2, sagemaker_endpoints):
    return sdk_v2([{"id": k, "code": SETUP + code, "names": {"ECHO": ECHO}} for k, code in CASES.items()])


@pytest.mark.parametrize("case", list(CASES))
def test_deploy_sends_v2s_requests(side, case):
    v2, ours = side.v2[case], side.ours[case]
    assert v2["error"] is None, f"the v2 case itself failed: {v2['error']}"
    assert ours["error"] is None, ours["error"]
    for operation in CREATE_CALLS:
        v2_calls, our_calls = requests(v2, operation), requests(ours, operation)
        assert len(v2_calls) == 1 and len(our_calls) == 1, (operation, v2_calls, our_calls)
        our_call, v2_call = without_documented_differences(our_calls[0], v2_calls[0])  # full DLC tags
        assert our_call == v2_call, operation
    assert ours["result"] == v2["result"]


def test_repacked_archives_hold_the_code_as_v2_lays_it_out(side):
    """A spot check of what the table above compares side by side: the layout itself."""
    assert side.ours["pt-options"]["result"] == [
        "code/inference.py", "code/lib/mylib/util.py", "code/sub/helper.py", "code/train.py",
        "config/params.json", "weights.bin"]
    assert side.ours["pt-graviton-entry-only"]["result"] == ["code/inference.py", "config/params.json", "weights.bin"]
    [model] = requests(side.ours["est-pt-training-code"], "CreateModel")
    assert model["PrimaryContainer"]["Environment"]["SAGEMAKER_PROGRAM"] == "train.py"  # v2 serves the training code
    [tf] = requests(side.ours["est-tf"], "CreateModel")
    assert tf["PrimaryContainer"]["Environment"] == {"SAGEMAKER_TFS_NGINX_LOGLEVEL": "info"}


def test_repacked_uploads_are_encrypted_and_owner_checked_as_v2s(side):
    def repack_uploads(result):
        return [{k: v for k, v in c["params"].items() if k not in ("Bucket", "Key", "Body", "ChecksumAlgorithm")}
                for c in result["calls"] if c["operation"] in ("PutObject", "CreateMultipartUpload")
                and c["params"]["Key"].endswith("/model.tar.gz") and c["params"]["Bucket"].startswith("sagemaker-")
                and "/output/" not in c["params"]["Key"]]

    for case in ("pt-positional-repack", "pt-options", "tf-positional-graviton-repack", "est-pt-training-code"):
        assert repack_uploads(side.ours[case]) == repack_uploads(side.v2[case]) != [], case


def test_predictions_send_v2s_headers_and_bodies(side):
    for case in ("predict-serializers", "predict-pytorch-default-numpy"):
        v2_calls = [c for c in side.v2[case]["calls"] if c["operation"] == "InvokeEndpoint"]
        our_calls = [c for c in side.ours[case]["calls"] if c["operation"] == "InvokeEndpoint"]
        assert len(v2_calls) == len(our_calls) > 0
        for v2_call, our_call in zip(v2_calls, our_calls):
            v2_params = {k: v for k, v in v2_call["params"].items() if k != "EndpointName"}
            our_params = {k: v for k, v in our_call["params"].items() if k != "EndpointName"}
            assert our_params == v2_params
    json_answer, csv_rows, floats, ints, text, raw, custom = side.ours["predict-serializers"]["result"]
    assert json_answer == {"inputs": ["a", "b"], "x": [1, 2]}
    assert csv_rows == [["1", "2.5", "x"], ["3", "4", "y"]]
    assert floats == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and ints == [[1, 2], [3, 4]]
    assert text == "raw bytes"
    assert json.loads(raw) == {"content_type": "text/plain", "bytes": 3}
    assert json.loads(custom) == {"content_type": "application/x-custom", "bytes": 1}



