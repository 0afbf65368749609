"""Notebooks written the SageMaker SDK v2 way (tests/data/v2_notebooks/), run cell by cell — once by the real
SDK v2, once by sagelaunch after the one swap rule — against one moto server: every cell's outcome is the same
(all succeed) and every request the notebook makes matches, generated names and timestamps aside.

The harness runs a notebook's code cells in order in one namespace (scripts/sdk_v2_oracle.py, "cells"), IPython
magics left out; a first harness cell, not part of the notebook, makes the caller an assumed role (a notebook's
`get_execution_role()` needs one) and opens the notebook's folder.
"""

from __future__ import annotations

import io
import json
import shutil
import tarfile

import boto3
import pytest

from tests.fixtures.sdk_v2 import (
    ASSUME_ROLE_CELL,
    ROOT,
    requests,
    without_documented_differences,
    without_magics,
)

NOTEBOOKS = ROOT / "tests" / "data" / "v2_notebooks"
HARNESS = ASSUME_ROLE_CELL + "os.chdir(WORKDIR)\n"
REQUESTS = ("CreateTrainingJob", "CreateModel", "CreateEndpointConfig", "CreateEndpoint", "InvokeEndpoint",
            "DescribeEndpoint", "DescribeEndpointConfig", "DeleteModel", "DeleteEndpointConfig", "DeleteEndpoint")


def notebook_cells(path) -> list[str]:
    """A notebook's code cells; IPython magics (%…, !…) become comments."""
    cells = json.loads(path.read_text())["cells"]
    return [without_magics("".join(c["source"])) for c in cells if c["cell_type"] == "code"]


@pytest.fixture(scope="module")
def side(sdk_v2, sagemaker_endpoints, tmp_path_factory):
    workdir = tmp_path_factory.mktemp("v2_notebooks") / "nb"
    shutil.copytree(NOTEBOOKS, workdir)
    with tarfile.open(workdir / "model.tar.gz", "w:gz") as tar:  # what a training job leaves
        info = tarfile.TarInfo("model.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
    cases = [{"id": nb.stem, "cells": [HARNESS, *notebook_cells(nb)], "names": {"WORKDIR": str(workdir)}}
             for nb in sorted(NOTEBOOKS.glob("*.ipynb"))]
    assert cases
    return sdk_v2(cases)


def test_every_cell_has_v2s_outcome(side):
    for name, v2 in side.v2.items():
        ours = side.ours[name]
        assert v2["cells"] == ["ok"] * len(v2["cells"]), (name, v2["cells"])
        assert ours["cells"] == v2["cells"], (name, ours["cells"])
        assert len(v2["cells"]) == 1 + len(notebook_cells(NOTEBOOKS / f"{name}.ipynb"))


def test_every_request_is_v2s(side):
    for name, v2 in side.v2.items():
        ours = side.ours[name]
        for operation in REQUESTS:
            v2_calls, our_calls = requests(v2, operation), requests(ours, operation)
            assert len(our_calls) == len(v2_calls), (name, operation)
            for our_call, v2_call in zip(our_calls, v2_calls):
                our_call, v2_call = without_documented_differences(our_call, v2_call)
                assert our_call == v2_call, (name, operation)
        assert requests(ours, "CreateTrainingJob"), name
    assert requests(side.ours["pytorch_train_deploy"], "InvokeEndpoint")  # a notebook really predicts


def test_a_model_archive_that_cannot_unpack_is_reported_as_itself_on_every_attempt(sagemaker_endpoints, sagemaker_env):
    """A notebook that deploys a model file which is no archive (the TF getting-started notebook's download, here
    a stand-in) must see the unpack error on each retry of InvokeEndpoint, not a leftover-folder error."""
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket="not-an-archive", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    s3.put_object(Bucket="not-an-archive", Key="model.tar.gz", Body=b"not a tar")
    for _attempt in range(2):
        with pytest.raises(tarfile.ReadError):
            sagemaker_endpoints.handler_for("123456789012", "s3://not-an-archive/model.tar.gz")
