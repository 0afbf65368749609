"""A version v2 accepts runs locally too (issue 28: local training refused PyTorch 1.5.0): the job runs on the
installed torch, the UnpatchedVersionWarning names the version's support status, and the job names v2's image."""

from __future__ import annotations

import pytest

from sagelaunch.estimators import PyTorch
from sagelaunch.jobspec.catalog import UnpatchedVersionWarning
from tests.local.conftest import unique

pytestmark = pytest.mark.slow  # a local job


def test_pytorch_1_5_0_trains_locally_with_a_support_warning(tmp_path):
    (tmp_path / "train.py").write_text("import torch\nprint('torch', torch.__version__, flush=True)\n")
    with pytest.warns(UnpatchedVersionWarning, match="AWS no longer patches PyTorch 1.5 training images"):
        est = PyTorch(entry_point="train.py", source_dir=str(tmp_path), framework_version="1.5.0", py_version="py3",
                      instance_type="local", output_path=str(tmp_path / "out"))
    assert est.training_image_uri().endswith("/pytorch-training:1.5.0-cpu-py3")
    job = est.fit(job_name=unique("pt150"))
    assert job.describe()["TrainingJobStatus"] == "Completed"
    assert any("torch " in line for line in job.logs())
