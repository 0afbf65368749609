"""The AWS getting-started MNIST flow in local mode, written the v2 way and swapped by the one rule: data fetched
from a "public" bucket and uploaded to the default bucket as a folder, two channels on one prefix, a PyTorch 1.5.0
`py3` job trained on CPU, then the job's own `model_data` deployed with a four-handler `inference.py` (JSON in,
a bare JSON string out) and asked for 16 images' log-probabilities; `predictor.delete_endpoint()` stops it.
The scripts are sagelaunch's own (tests/data/v2_notebooks/mnist_code), in the shape of AWS's."""

from __future__ import annotations

import math
import shutil
import sys

import boto3
import numpy as np
import pytest

from tests.fixtures.aws_examples import mnist_idx_files
from tests.fixtures.sdk_v2 import ROOT, assume_notebook_role
from tests.parity_v2.test_notebooks import NOTEBOOKS

sys.path.insert(0, str(ROOT / "scripts"))
from sdk_v2_oracle import swap_imports  # noqa: E402

pytestmark = pytest.mark.slow  # a local job and a local endpoint

PUBLIC_BUCKET = "sample-files-public"
CELLS = [
    """
import os
import sagemaker
from sagemaker.pytorch import PyTorch, PyTorchModel
from sagemaker import get_execution_role
from sagemaker.serializers import JSONSerializer
from sagemaker.deserializers import JSONDeserializer

sess = sagemaker.Session()
role = get_execution_role()
output_path = "s3://" + sess.default_bucket() + "/mnist"
""",
    """
import boto3
s3 = boto3.client("s3")
for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
             "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
    os.makedirs("data", exist_ok=True)
    s3.download_file(PUBLIC_BUCKET, "datasets/image/MNIST/" + name, os.path.join("data", name))
loc = sess.upload_data(path="data", bucket=sess.default_bucket(), key_prefix="mnist")
channels = {"training": loc, "testing": loc}
""",
    """
local_mode = True
instance_type = "local" if local_mode else "ml.c4.xlarge"
est = PyTorch(entry_point="train.py", source_dir="mnist_code", role=role, framework_version="1.5.0", py_version="py3",
              instance_type=instance_type, instance_count=1, output_path=output_path,
              hyperparameters={"batch-size": 16, "epochs": 3, "learning-rate": 1e-2})
est.fit(inputs=channels)
""",
    """
model = PyTorchModel(entry_point="inference.py", source_dir="mnist_code", role=role, model_data=est.model_data,
                     framework_version="1.5.0", py_version="py3")
predictor = model.deploy(initial_instance_count=1, instance_type=instance_type,
                         serializer=JSONSerializer(), deserializer=JSONDeserializer())
""",
    """
import numpy as np
res = predictor.predict({"inputs": np.random.rand(16, 1, 28, 28).tolist()})
predictor.delete_endpoint()
""",
]


def test_the_mnist_flow_trains_deploys_its_model_and_predicts_locally(tmp_path, monkeypatch, sagemaker_env):
    workdir = tmp_path / "nb"
    shutil.copytree(NOTEBOOKS / "mnist_code", workdir / "mnist_code")
    rng = np.random.default_rng(0)
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=PUBLIC_BUCKET, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    for name, body in {**mnist_idx_files("train", 64, rng), **mnist_idx_files("t10k", 16, rng)}.items():
        s3.put_object(Bucket=PUBLIC_BUCKET, Key=f"datasets/image/MNIST/{name}", Body=body)
    monkeypatch.chdir(workdir)
    assume_notebook_role(monkeypatch, "MnistNotebookRole")

    namespace: dict = {"__name__": "__notebook__", "PUBLIC_BUCKET": PUBLIC_BUCKET}
    for cell in CELLS:
        exec(compile(swap_imports(cell), "<cell>", "exec"), namespace)

    job = namespace["est"].latest_training_job
    assert job.describe()["TrainingJobStatus"] == "Completed"
    logs = "\n".join(job.logs())
    assert "epoch 3: 64 images, test accuracy" in logs  # both channels held the uploaded idx files
    assert namespace["est"].model_data.startswith("s3://sagemaker-us-west-2-123456789012/mnist/")
    res = namespace["res"]
    assert len(res) == 16 and all(len(row) == 10 for row in res)
    assert all(math.isclose(sum(math.exp(p) for p in row), 1.0, rel_tol=1e-4) for row in res)  # log-probabilities from the deployed net
    from sagelaunch.launcher.local.serving.endpoint import running_endpoint

    assert running_endpoint(namespace["predictor"].endpoint_name) is None
