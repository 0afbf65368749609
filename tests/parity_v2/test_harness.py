"""The v2 oracle itself: one plain PyTorch job written the v2 way sends the same CreateTrainingJob from the
real SDK v2 and from ours once the imports are swapped (the rest of tests/parity_v2 builds on this)."""

from __future__ import annotations

from tests.fixtures.sdk_v2 import requests, without_documented_differences

CODE = """
import os, tempfile
src = tempfile.mkdtemp()
open(os.path.join(src, "train.py"), "w").write("print('hi')\\n")
from sagemaker.pytorch import PyTorch
est = PyTorch(entry_point="train.py", source_dir=src, role=ROLE, framework_version="2.0.0", py_version="py310",
              instance_type="ml.g5.xlarge", instance_count=1, hyperparameters={"epochs": 2, "lr": 0.1})
est.fit(wait=False, job_name=JOB)
RESULT = est.latest_training_job.name
"""


def test_one_job_sends_the_same_request_from_both_sdks(sdk_v2):
    side = sdk_v2([{"id": "harness-basic", "code": CODE}])
    v2, ours = side.v2["harness-basic"], side.ours["harness-basic"]
    assert v2["error"] is None and ours["error"] is None, (v2["error"], ours["error"])
    assert v2["result"] == v2["job"] and ours["result"] == ours["job"]
    [v2_request] = requests(v2, "CreateTrainingJob")
    [our_request] = requests(ours, "CreateTrainingJob")
    assert v2_request["HyperParameters"]["sagemaker_submit_directory"] == (
        '"s3://sagemaker-us-west-2-123456789012/<job>/source/sourcedir.tar.gz"')
    our_request, v2_request = without_documented_differences(our_request, v2_request)
    assert our_request == v2_request
