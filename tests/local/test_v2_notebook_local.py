"""A v2-style notebook in local mode: tests/data/v2_notebooks/pytorch_train_deploy.ipynb with its imports swapped by
the one rule and its instance type set to "local" (what a v2 user changes for local mode) really trains, deploys
and predicts on this machine — data and model in S3 (the moto server), the caller an assumed role."""

from __future__ import annotations

import io
import shutil
import sys
import tarfile

import pytest

from tests.fixtures.sdk_v2 import ROOT, assume_notebook_role
from tests.parity_v2.test_notebooks import NOTEBOOKS, notebook_cells

sys.path.insert(0, str(ROOT / "scripts"))
from sdk_v2_oracle import swap_imports  # noqa: E402

pytestmark = pytest.mark.slow  # a local job and a local endpoint


def test_the_notebook_trains_deploys_and_predicts_locally(tmp_path, monkeypatch, sagemaker_env):
    workdir = tmp_path / "nb"
    shutil.copytree(NOTEBOOKS, workdir)
    with tarfile.open(workdir / "model.tar.gz", "w:gz") as tar:
        info = tarfile.TarInfo("model.json")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"{}"))
    monkeypatch.chdir(workdir)
    assume_notebook_role(monkeypatch, "LocalNotebookRole")

    namespace: dict = {"__name__": "__notebook__"}
    for cell in notebook_cells(NOTEBOOKS / "pytorch_train_deploy.ipynb"):
        exec(compile(swap_imports(cell).replace('"ml.c4.xlarge"', '"local"'), "<cell>", "exec"), namespace)

    assert namespace["role"] == "arn:aws:iam::123456789012:role/service-role/LocalNotebookRole"
    assert namespace["answer"] == pytest.approx([0.3, 1.6])  # the handler really served the model
    job = namespace["est"].latest_training_job
    job.wait(logs=False)
    assert job.describe()["TrainingJobStatus"] == "Completed"
    assert any("2 rows, 2 epoch(s)" in line for line in job.logs())  # the data came from S3 into the channel
    from sagelaunch.launcher.local.serving.endpoint import running_endpoint

    assert running_endpoint(namespace["predictor"].endpoint_name) is None  # sess.delete_endpoint stopped it
