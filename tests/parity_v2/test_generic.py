"""v2's generic Estimator (sagemaker.estimator.Estimator) on the real SDK v2 and on ours, one moto server: the
CreateTrainingJob of a bring-your-own image (hyperparameters sent as str()), of a framework image in script mode,
v2's positional order, hyperparameters(), and Estimator.attach rebuilding it from DescribeTrainingJob (and HuggingFace.attach: PyTorch's and TensorFlow's are in
test_calls.py)."""

from __future__ import annotations

import pytest

from tests.fixtures.sdk_v2 import (INPUT_BUCKET_CELL, both_ok, named_result, requests,
                                   without_documented_differences)

SETUP = INPUT_BUCKET_CELL + """
import os, tempfile
src = tempfile.mkdtemp()
open(os.path.join(src, "train.py"), "w").write("print('hi')\\n")
from sagemaker.estimator import Estimator
IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/my-algo:latest"
DLC = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0-cpu-py310"
"""

CASES = {
    # by position, as bring-your-own-image notebooks write it
    "generic-byo": """
est = Estimator(IMAGE, ROLE, 1, "ml.m5.xlarge", None, 50, None, 3600, "File", None, None, "byo",
                hyperparameters={"epochs": 2, "lr": 0.1, "name": "x", "flag": True},
                metric_definitions=[{"Name": "loss", "Regex": "loss: ([0-9.]+)"}])
before = est.hyperparameters()
est.fit({"train": "s3://bucket-x/train"}, wait=False, job_name=JOB)
RESULT = {"before": before, "image": est.training_image_uri(), "output_path": est.output_path,
          "session": type(est.sagemaker_session).__name__}
""",
    # no hyperparameters at all: v2 leaves HyperParameters out
    "generic-bare": """
est = Estimator(image_uri=IMAGE, role=ROLE, instance_count=2, instance_type="ml.c5.xlarge", disable_profiler=True,
                environment={"MODE": "x"})
est.fit(wait=False, job_name=JOB)
""",
    # a framework image in script mode: the code ships, hyperparameters JSON-encoded with a source_dir
    "generic-script": """
est = Estimator(DLC, ROLE, 1, "ml.m5.xlarge", entry_point="train.py", source_dir=src,
                hyperparameters={"epochs": 2, "name": "x"})
est.fit(wait=False, job_name=JOB)
RESULT = {"hp": {k: v for k, v in est.hyperparameters().items() if not k.startswith("sagemaker_")}}
""",
    "generic-attach": """
est = Estimator(IMAGE, ROLE, 1, "ml.m5.xlarge", hyperparameters={"epochs": 3, "lr": 0.5},
                tags=[{"Key": "team", "Value": "ml"}], base_job_name="byo-attach")
est.fit({"train": "s3://bucket-x/train"}, wait=False, job_name=JOB)
att = Estimator.attach(JOB)
RESULT = {"hp": att.hyperparameters(), "image": att.image_uri, "model_data": att.model_data,
          "instance_type": att.instance_type, "instance_count": att.instance_count, "role": att.role,
          "base_job_name": att.base_job_name, "tags": att.tags, "name": att.latest_training_job.name,
          "session": type(att.sagemaker_session).__name__}
""",
    # HuggingFace.attach: transformers_version, pytorch_version and py_version read back from the image's tag
    "hf-attach": """
from sagemaker.huggingface import HuggingFace
est = HuggingFace(entry_point="train.py", source_dir=src, role=ROLE, transformers_version="4.28.1",
                  pytorch_version="2.0.0", py_version="py310", instance_type="ml.g5.xlarge", instance_count=1,
                  hyperparameters={"epochs": 1})
est.fit(wait=False, job_name=JOB)
att = HuggingFace.attach(JOB)
# v2 keeps the transformers version as framework_version, ours as transformers_version (README: where we differ)
RESULT = {"hp": att.hyperparameters(), "transformers_version": getattr(att, "transformers_version", att.framework_version),
          "pytorch_version": att.pytorch_version, "py_version": att.py_version, "entry_point": att.entry_point,
          "instance_type": att.instance_type}
""",
    # deploy of the image's own server: v2's CreateModel, CreateEndpointConfig, CreateEndpoint, then the deletes
    "generic-deploy": """
est = Estimator(IMAGE, ROLE, 1, "ml.m5.xlarge", hyperparameters={"a": 1})
est.fit(wait=False, job_name=JOB)
predictor = est.deploy(1, "ml.m5.xlarge", endpoint_name=JOB + "-e", model_name=JOB + "-m")
predictor.delete_endpoint()
""",
}


@pytest.fixture(scope="module")
def side(sdk_v2, sagemaker_endpoints):
    return sdk_v2([{"id": case_id, "code": SETUP + code} for case_id, code in CASES.items()])


@pytest.mark.parametrize("case_id", ["generic-byo", "generic-bare", "generic-script", "generic-attach"])
def test_create_training_job_as_v2(side, case_id):
    v2, ours = both_ok(side, case_id)
    [v2_request], [our_request] = requests(v2, "CreateTrainingJob"), requests(ours, "CreateTrainingJob")
    our_request, v2_request = without_documented_differences(our_request, v2_request)
    if case_id == "generic-script":  # the code archive: v2 names its folder by its own timestamp, we by the job
        for request in (our_request, v2_request):
            request["HyperParameters"].pop("sagemaker_submit_directory")
    assert our_request == v2_request
    if case_id == "generic-byo":
        assert our_request["HyperParameters"] == {"epochs": "2", "lr": "0.1", "name": "x", "flag": "True"}
    if case_id == "generic-bare":
        assert "HyperParameters" not in our_request


def test_hyperparameters_and_session_as_v2(side):
    for case_id in ("generic-byo", "generic-script"):
        v2, ours = (named_result(r) for r in both_ok(side, case_id))
        assert ours == v2, case_id
    assert named_result(side.ours["generic-byo"])["session"] == "Session"


def test_deploy_of_the_images_server_as_v2(side):
    v2, ours = both_ok(side, "generic-deploy")
    for operation in ("CreateModel", "CreateEndpointConfig", "CreateEndpoint", "DeleteEndpoint",
                      "DeleteEndpointConfig"):
        assert requests(ours, operation) == requests(v2, operation), operation
    [model] = requests(ours, "CreateModel")
    assert model["PrimaryContainer"] == {"Image": "123456789012.dkr.ecr.us-west-2.amazonaws.com/my-algo:latest",
                                         "Environment": {}, "ModelDataUrl": "s3://sagemaker-us-west-2-123456789012/"
                                                                            "<job>/output/model.tar.gz"}


def test_huggingface_attach_reads_the_versions_from_the_tag(side):
    v2, ours = (named_result(r) for r in both_ok(side, "hf-attach"))
    assert ours == v2
    assert (ours["transformers_version"], ours["pytorch_version"], ours["py_version"]) == ("4.28.1", "2.0.0", "py310")


def test_attach_rebuilds_the_generic_estimator(side):
    v2, ours = (named_result(r) for r in both_ok(side, "generic-attach"))
    assert ours == v2
    assert ours["hp"] == {"epochs": "3", "lr": "0.5"} and ours["tags"] == [{"Key": "team", "Value": "ml"}]
