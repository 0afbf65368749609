"""Batch transform on the real SDK v2 and on ours (one moto server): estimator.transformer() of a generic and of a
PyTorch estimator (CreateModel, then CreateTransformJob with split type, strategy, assemble_with, accept, max payload
and the DataProcessing filters), Transformer(model_name, …) by hand, and the Describe/wait loop."""

from __future__ import annotations

import pytest

from tests.fixtures.sdk_v2 import (INPUT_BUCKET_CELL, both_ok, named_result, requests,
                                   without_documented_differences)

SETUP = INPUT_BUCKET_CELL + """
import os, tempfile
src = tempfile.mkdtemp()
open(os.path.join(src, "inference.py"), "w").write("def model_fn(d):\\n    return 1\\n")
from sagemaker.estimator import Estimator
from sagemaker.pytorch import PyTorch
from sagemaker.transformer import Transformer
IMAGE = "123456789012.dkr.ecr.us-west-2.amazonaws.com/my-algo:latest"
"""

CASES = {
    "transform-generic": """
est = Estimator(IMAGE, ROLE, 1, "ml.m5.xlarge", hyperparameters={"a": 1})
est.fit(wait=False, job_name=JOB)
t = est.transformer(1, "ml.m5.xlarge", strategy="MultiRecord", assemble_with="Line", accept="text/csv",
                    max_payload=6, output_path="s3://bucket-x/out", model_name=JOB + "-m")
t.transform("s3://bucket-x/in", content_type="text/csv", split_type="Line", input_filter="$[1:]",
            output_filter="$[0]", join_source="Input", job_name=JOB + "-t", wait=False)
t.wait()
import sagemaker
waited = sagemaker.Session().wait_for_transform_job(JOB + "-t")
RESULT = {"name": t.latest_transform_job.job_name, "model": t.model_name,
          "status": waited["TransformJobStatus"]}
""",
    "transform-pytorch": """
est = PyTorch(entry_point="inference.py", source_dir=src, framework_version="2.0.0", py_version="py310",
              role=ROLE, instance_type="ml.m5.xlarge", instance_count=1)
est.fit(wait=False, job_name=JOB)
import io, tarfile
archive = io.BytesIO()
with tarfile.open(fileobj=archive, mode="w:gz") as tar:
    info = tarfile.TarInfo("model.pth"); info.size = 1; tar.addfile(info, io.BytesIO(b"1"))
s3.put_object(Bucket="sagemaker-us-west-2-123456789012", Key=JOB + "/output/model.tar.gz", Body=archive.getvalue())
t = est.transformer(2, "ml.m5.xlarge", strategy="SingleRecord", output_path="s3://bucket-x/out2",
                    max_concurrent_transforms=4, env={"K": "V"}, model_name=JOB + "-m")
t.transform("s3://bucket-x/in", content_type="application/json", job_name=JOB + "-t", wait=False)
""",
    "transform-by-name": """
t = Transformer("some-model", 1, "ml.c5.xlarge", output_path="s3://bucket-x/out3", accept="application/json",
                tags=[{"Key": "k", "Value": "v"}])
t.transform("s3://bucket-x/in/a.csv", data_type="S3Prefix", content_type="text/csv", split_type="None",
            compression_type="Gzip", job_name=JOB + "-t", wait=False)
""",
}


@pytest.fixture(scope="module")
def side(sdk_v2):
    return sdk_v2([{"id": case_id, "code": SETUP + code} for case_id, code in CASES.items()])


@pytest.mark.parametrize("case_id", list(CASES))
def test_create_transform_job_as_v2(side, case_id):
    v2, ours = both_ok(side, case_id)
    assert requests(ours, "CreateTransformJob") == requests(v2, "CreateTransformJob")
    [request] = requests(ours, "CreateTransformJob")
    assert request["TransformJobName"] == "<job>-t"


@pytest.mark.parametrize("case_id", ["transform-generic", "transform-pytorch"])
def test_create_model_before_the_transform_as_v2(side, case_id):
    v2, ours = both_ok(side, case_id)
    [v2_model], [our_model] = requests(v2, "CreateModel"), requests(ours, "CreateModel")
    our_model, v2_model = without_documented_differences(our_model, v2_model)
    for model in (our_model, v2_model):  # the repacked archive's folder: v2 names it by its own timestamp
        model["PrimaryContainer"].get("Environment", {}).pop("SAGEMAKER_SUBMIT_DIRECTORY", None)
    assert our_model == v2_model
    assert our_model["ModelName"] == "<job>-m"


def test_the_wait_loop_as_v2(side):
    v2, ours = both_ok(side, "transform-generic")
    v2_result, our_result = named_result(v2), named_result(ours)
    assert our_result == v2_result == {"name": "<job>-t", "model": "<job>-m", "status": "Completed"}
    assert len(requests(ours, "DescribeTransformJob")) >= 2  # transformer.wait() and Session.wait_for_transform_job
