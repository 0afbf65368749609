"""The SDK v2 calls on a local job's estimator: a failed fit keeps latest_training_job (describe, logs, its
failure reason), attach() rebuilds the estimator from the local registry, model_data and hyperparameters()
read the job, and the profiler updates (UpdateTrainingJob on SageMaker) say why a local job cannot take them."""

from __future__ import annotations

import pytest

from sagelaunch.estimators import PyTorch
from sagelaunch.launcher.common.jobs import JobFailedError
from tests.local.conftest import unique

pytestmark = pytest.mark.slow  # local jobs: supervisors, torchrun, ranks

FAILING = """import sys
print("starting epoch 1", flush=True)
raise RuntimeError("loss became NaN at step 3")
"""
WORKING = """import os, sys
print("args", sys.argv[1:], flush=True)
open(os.path.join(os.environ["SM_MODEL_DIR"], "weights.txt"), "w").write("w")
"""


def _estimator(tmp_path, script: str, **kwargs) -> PyTorch:
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    (source / "train.py").write_text(script)
    return PyTorch(entry_point="train.py", source_dir=str(source), framework_version="2.0.0", py_version="py310",
                   instance_type="local", output_path=str(tmp_path / "out"), **kwargs)


def test_a_failed_fit_keeps_the_job_its_logs_and_reason(tmp_path, capsys):
    est = _estimator(tmp_path, FAILING)
    with pytest.raises(JobFailedError):
        est.fit(job_name=unique("v2-failed"))
    job = est.latest_training_job
    assert job is not None and job.job_name == job.name
    description = job.describe()
    assert description["TrainingJobStatus"] == "Failed"
    assert "loss became NaN at step 3" in description["FailureReason"]
    capsys.readouterr()
    with pytest.raises(JobFailedError) as failed:  # as v2: logs() prints the logs, then raises for a failed job
        est.logs()
    out = capsys.readouterr().out
    assert "[algo-1 rank0] starting epoch 1" in out and "RuntimeError: loss became NaN at step 3" in out
    assert "loss became NaN" in str(failed.value)
    with pytest.raises(ValueError, match="UpdateTrainingJob.*local job.*profiler_config="):
        est.update_profiler(system_monitor_interval_millis=500)
    for call in (est.enable_default_profiling, est.disable_profiling):
        with pytest.raises(ValueError, match="local job"):
            call()


def test_attach_rebuilds_a_local_job_and_reads_its_model(tmp_path, capsys):
    est = _estimator(tmp_path, WORKING, hyperparameters={"epochs": 2, "name": "tiny"}, base_job_name="local-attach",
                     tags={"team": "ml"})
    assert est.hyperparameters() == {"epochs": "2", "name": '"tiny"'}
    with pytest.raises(ValueError, match="model_data needs a training job: call fit"):
        est.model_data
    est.fit(logs=False)
    sent = est.hyperparameters()
    assert sent["sagemaker_program"] == '"train.py"' and sent["epochs"] == "2"
    assert sent["sagemaker_job_name"] == f'"{est.latest_training_job.name}"'

    attached = PyTorch.attach(est.latest_training_job.name)
    assert attached.latest_training_job.name == est.latest_training_job.name
    assert attached.hyperparameters() == sent
    assert attached.user_hyperparameters == {"epochs": 2, "name": "tiny"}
    assert attached.model_data == est.model_data and est.model_data.endswith("model.tar.gz")
    assert attached.training_image_uri() == est.training_image_uri()
    assert (attached.instance_type, attached.entry_point, attached.base_job_name) == ("local", "train.py", "local-attach")
    assert attached.tags == [{"Key": "team", "Value": "ml"}]
    capsys.readouterr()
    attached.logs()
    assert "args ['--epochs', '2', '--name', 'tiny']" in capsys.readouterr().out
    with pytest.raises(ValueError, match=r"not a tensorflow one; attach it with PyTorch.attach"):
        from sagelaunch.estimators import TensorFlow

        TensorFlow.attach(est.latest_training_job.name)
