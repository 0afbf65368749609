"""v2's `HuggingFace` estimator, written the v2 way: the real SDK v2 and ours (one swap rule) send the same
CreateTrainingJob (the Hugging Face DLC as v2 resolves it, its base job name, the PyTorch job settings) against one
moto server; what v2 refuses (a CPU instance: the training images are GPU-only) is refused by both."""

from __future__ import annotations

import pytest

from tests.fixtures.sdk_v2 import requests, without_documented_differences
from tests.parity_v2.test_requests import SETUP

HF = SETUP + "from sagemaker.huggingface import HuggingFace\n"
HP = "hyperparameters={'epochs': 1, 'model_name_or_path': 'distilbert-base-uncased'}"
CASES = {
    "hf-keywords": f"""
est = HuggingFace(entry_point='train.py', source_dir=SRC, role=ROLE, transformers_version='4.28.1',
                  pytorch_version='2.0.0', py_version='py310', instance_type='ml.g5.xlarge', instance_count=1, {HP})
est.fit(wait=False)
RESULT = [est.latest_training_job.name.rsplit('-', 7)[0], est.training_image_uri()]
""",
    "hf-positional-aliases": f"""
est = HuggingFace('py39', 'train.py', '4.26', None, '1.13', source_dir=SRC, role=ROLE, instance_type='ml.p3.2xlarge',
                  instance_count=2, {HP})
est.fit(wait=False, job_name=JOB)
RESULT = est.training_image_uri()
""",
    "hf-oldest-pytorch": f"""
est = HuggingFace(entry_point='train.py', source_dir=SRC, role=ROLE, transformers_version='4.6.1',
                  pytorch_version='1.7.1', py_version='py36', instance_type='ml.p3.2xlarge', instance_count=1)
est.fit(wait=False, job_name=JOB)
""",
    "hf-smddp": f"""
est = HuggingFace(entry_point='train.py', source_dir=SRC, role=ROLE, transformers_version='4.28.1',
                  pytorch_version='2.0.0', py_version='py310', instance_type='ml.p4d.24xlarge', instance_count=2,
                  distribution={{'smdistributed': {{'dataparallel': {{'enabled': True}}}}}}, {HP})
est.fit(wait=False, job_name=JOB)
""",
    "hf-cpu-refused": """
est = HuggingFace(entry_point='train.py', source_dir=SRC, role=ROLE, transformers_version='4.28.1',
                  pytorch_version='2.0.0', py_version='py310', instance_type='ml.m5.xlarge', instance_count=1)
est.fit(wait=False, job_name=JOB)
""",
}


@pytest.fixture(scope="module")
def side(sdk_v2):
    return sdk_v2([{"id": k, "code": HF + code} for k, code in CASES.items()])


@pytest.mark.parametrize("case", [c for c in CASES if not c.endswith("refused")])
def test_huggingface_sends_v2s_create_training_job(side, case):
    v2, ours = side.v2[case], side.ours[case]
    assert v2["error"] is None and ours["error"] is None, (v2["error"], ours["error"])
    [v2_request], [our_request] = requests(v2, "CreateTrainingJob"), requests(ours, "CreateTrainingJob")
    our_request, v2_request = without_documented_differences(our_request, v2_request)
    assert our_request == v2_request
    assert v2_request["AlgorithmSpecification"]["TrainingImage"].split("/")[1].startswith("huggingface-pytorch-training:")
    assert ours["result"] == v2["result"]


def test_a_cpu_instance_is_refused_by_both(side):
    v2, ours = side.v2["hf-cpu-refused"], side.ours["hf-cpu-refused"]
    assert "Unsupported processor: cpu" in v2["error"]
    assert "Hugging Face training images are gpu only" in ours["error"]
    assert requests(ours, "CreateTrainingJob") == []


# ------------------------------------------------------------------ HuggingFaceModel: the Hugging Face serving DLC
HFM = "from sagemaker.huggingface import HuggingFaceModel\n"
MODEL_CASES = {
    "hfm-plain-cpu": HFM + """
m = HuggingFaceModel(model_data=MODEL, role=ROLE, transformers_version='4.28.1', pytorch_version='2.0.0',
                     py_version='py310')
p = m.deploy(1, 'ml.m5.xlarge', wait=False)
RESULT = [p.content_type, list(p.accept)]
""",
    "hfm-positional-entry-gpu": HFM + """
m = HuggingFaceModel(ROLE, MODEL, 'inference.py', '4.26', None, '1.13', 'py39', source_dir=src)
p = m.deploy(1, 'ml.g5.xlarge', endpoint_name=JOB, wait=False)
RESULT = archive_of(JOB)
""",
}


@pytest.fixture(scope="module")
def model_side(sdk_v2, sagemaker_endpoints):
    from tests.parity_v2.test_deploy import ECHO, SETUP as DEPLOY_SETUP

    return sdk_v2([{"id": k, "code": DEPLOY_SETUP + code, "names": {"ECHO": ECHO}} for k, code in MODEL_CASES.items()])


@pytest.mark.parametrize("case", list(MODEL_CASES))
def test_huggingface_model_deploys_as_v2(model_side, case):
    v2, ours = model_side.v2[case], model_side.ours[case]
    assert v2["error"] is None and ours["error"] is None, (v2["error"], ours["error"])
    for operation in ("CreateModel", "CreateEndpointConfig", "CreateEndpoint"):
        [v2_call], [our_call] = requests(v2, operation), requests(ours, operation)
        assert our_call == v2_call, operation
    [model] = requests(ours, "CreateModel")
    assert model["PrimaryContainer"]["Image"].split("/")[1].startswith("huggingface-pytorch-inference:")
    assert ours["result"] == v2["result"]
