"""AWS's own example notebooks (tests/data/v2_notebooks/aws/) in local mode: swapped by the one rule, their SageMaker
instance type set to "local" (the only change; the harness adds what tests/fixtures/aws_examples.py says, the same as
for the moto runs), run cell by cell in this process. The PyTorch getting-started notebook really trains on CPU; the
deploy notebooks serve their models locally (PyTorch through the notebook's handlers, TensorFlow as TF Serving) and
predict. A notebook that cannot run here is skipped
with the physical reason."""

from __future__ import annotations

import io
import math
import random
import re
import sys
import tarfile

import boto3
import numpy as np
import pytest

from scripts.sdk_v2_oracle import swap_imports
from tests.fixtures.aws_examples import (
    NOTEBOOKS,
    STAND_INS,
    TEST_IMAGES,
    case_id,
    copy_examples,
    notebook_cells,
    seeded_notebook_data,
)
from tests.fixtures.sdk_v2 import assume_notebook_role

pytestmark = pytest.mark.slow  # local jobs and local endpoints

SAGEMAKER_INSTANCE = '"ml.c4.xlarge"'  # the instance type each notebook names; local mode replaces it


def _keras_3() -> bool:
    import keras

    return int(keras.__version__.split(".")[0]) >= 3


def local_skip_reason(folder: str, notebook: str) -> str | None:
    """Why a notebook cannot run in local mode on this machine, or None."""
    if folder == "pytorch_profiling":
        return ("its script downloads CIFAR-10 and ImageNet-pretrained ResNeXt-50 weights from the internet "
                "(torchvision), which this machine cannot reach, needs smdebug, and asks for a CUDA device (gpu=True)")
    if (folder, notebook) == ("tensorflow_mnist", "get_started_mnist_train.ipynb") and _keras_3():
        return ("code/train.py is written for the TensorFlow 2.3 container: it calls Metric.reset_states() and "
                "model.save(<folder>), which Keras 3 (this machine's TensorFlow) removed; local jobs run the local "
                "TensorFlow, not the container's")
    return None


def run_locally(folder: str, notebook: str, workdir, monkeypatch) -> dict:
    """The notebook's cells in one namespace, as its kernel would run them in local mode."""
    monkeypatch.chdir(workdir / folder)
    monkeypatch.setattr(sys, "path", ["", *sys.path, str(STAND_INS)])  # the kernel's folder; the plotting stand-in
    monkeypatch.delitem(sys.modules, "utils", raising=False)
    random.seed(0)
    np.random.seed(0)
    namespace: dict = {"__name__": "__notebook__"}
    for index, cell in enumerate(notebook_cells(folder, notebook)):
        code = swap_imports(cell).replace(SAGEMAKER_INSTANCE, '"local"')
        exec(compile(code, f"<{notebook} cell {index}>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize(("folder", "notebook"), NOTEBOOKS, ids=[f"{f}/{n}" for f, n in NOTEBOOKS])
def test_the_notebook_runs_in_local_mode(folder, notebook, tmp_path, monkeypatch, sagemaker_env):
    reason = local_skip_reason(folder, notebook)
    if reason:
        pytest.skip(reason)
    workdir = copy_examples(tmp_path / "aws")
    with seeded_notebook_data(tmp_path):
        assume_notebook_role(monkeypatch, case_id(folder, notebook))
        CHECKS[(folder, notebook)](run_locally(folder, notebook, workdir, monkeypatch))


def _trained_locally(namespace: dict) -> None:
    job = namespace["est"].latest_training_job
    assert job.describe()["TrainingJobStatus"] == "Completed"
    logs = "\n".join(job.logs())
    # the script's test pass over the testing channel: the synthetic idx files uploaded from the notebook's data folder
    assert re.search(rf"Test set: Average loss: [0-9.]+, Accuracy: \d+/{TEST_IMAGES}, ", logs), logs[-2000:]
    model_data = namespace["pt_mnist_model_data"]
    assert model_data.startswith("s3://sagemaker-us-west-2-123456789012/mnist/")
    bucket, _, key = model_data.removeprefix("s3://").partition("/")
    archive = boto3.client("s3").get_object(Bucket=bucket, Key=key)["Body"].read()
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        assert "model.pth" in tar.getnames()  # the script's save_model ran


def _stopped(namespace: dict) -> None:
    from sagelaunch.launcher.local.serving.endpoint import running_endpoint

    assert running_endpoint(namespace["predictor"].endpoint_name) is None  # the clean-up cell stopped it


def _pytorch_deployed_and_predicted_locally(namespace: dict) -> None:
    # the handler's output_fn answered 16 rows of log-probabilities from the pretrained Net's weights
    assert len(namespace["res"]) == 16 and all(len(row) == 10 for row in namespace["res"])
    assert all(abs(sum(math.exp(p) for p in row) - 1) < 1e-4 for row in namespace["res"])
    assert len(namespace["predictions"]) == 16 and all(0 <= p < 10 for p in namespace["predictions"])
    _stopped(namespace)


def _tensorflow_deployed_and_predicted_locally(namespace: dict) -> None:
    assert len(namespace["res"]["predictions"]) == 4 and len(namespace["res"]["predictions"][0]) == 10
    predictions = namespace["predictions"].tolist()
    assert len(predictions) == 16 and all(0 <= p < 10 for p in predictions)
    _stopped(namespace)


CHECKS = {
    ("pytorch_mnist", "get_started_mnist_train.ipynb"): _trained_locally,
    ("pytorch_mnist", "get_started_mnist_deploy.ipynb"): _pytorch_deployed_and_predicted_locally,
    ("tensorflow_mnist", "get_started_mnist_deploy.ipynb"): _tensorflow_deployed_and_predicted_locally,
}


def test_every_runnable_notebook_is_checked():
    runnable = {nb for nb in NOTEBOOKS if local_skip_reason(*nb) is None}
    assert runnable <= set(CHECKS), runnable - set(CHECKS)
