"""The SDK v2 calls on a SageMaker job's estimator, in this process (moto): fit() keeps latest_training_job
before it waits, so a Ctrl-C or a failure leaves a job to describe; v2's `logs=` values; attach of a name
nobody knows. (What v2 itself does for each call is compared in tests/parity_v2/test_calls.py.)"""

from __future__ import annotations

import pytest

from sagelaunch.estimators import PyTorch
from sagelaunch.launcher.common.jobs import JobFailedError, JobNotFoundError
from tests.fixtures.sagemaker_fakes import Step
from tests.sagemaker.jobspecs import ROLE, make_source

pytestmark = pytest.mark.timeout(90)  # a wait that never ends must fail, not hang


def _estimator(tmp_path, base: str) -> PyTorch:
    return PyTorch(entry_point="train.py", source_dir=str(make_source(tmp_path / "src")), role=ROLE,
                   framework_version="2.0.0", py_version="py310", instance_type="ml.g5.xlarge", region="us-west-2",
                   base_job_name=base, hyperparameters={"epochs": 1})


def test_ctrl_c_during_fit_leaves_the_job_to_describe_and_follow(sagemaker_env, tmp_path, capsys, terminal_ctrl_c):
    sagemaker_env.plan("v2-ctrl-c", Step("InProgress", "Starting", "Preparing"),
                       Step("InProgress", "Training", "Training", logs=(("algo-1", "epoch 1"),), interrupt=True),
                       Step("InProgress", "Training", "Training", logs=(("algo-1", "epoch 2"),)),
                       Step("Completed", "Completed", "done"))
    est = _estimator(tmp_path, "v2-ctrl-c")
    with pytest.raises(KeyboardInterrupt):
        est.fit()
    job = est.latest_training_job
    assert job is not None and job.name.startswith("v2-ctrl-c-")
    assert job.describe()["TrainingJobStatus"] == "InProgress"  # still running on SageMaker: not stopped
    assert sagemaker_env.proxy.calls("StopTrainingJob") == []
    capsys.readouterr()
    est.logs()  # follows the job to its end, as v2's logs()
    out = capsys.readouterr().out
    assert "[algo-1] epoch 1" in out and "[algo-1] epoch 2" in out
    assert job.status == "Completed"
    assert est.model_data == f"s3://sagemaker-us-west-2-123456789012/{job.name}/output/model.tar.gz"


def test_a_failed_fit_keeps_the_failure_reason(sagemaker_env, tmp_path):
    sagemaker_env.plan("v2-failed", Step("InProgress", "Training", "Training"),
                       Step("Failed", "Failed", "failed", failure_reason="AlgorithmError: CUDA out of memory"))
    est = _estimator(tmp_path, "v2-failed")
    with pytest.raises(JobFailedError, match="CUDA out of memory"):
        est.fit(logs="None")  # v2's log type: wait without streaming
    assert est.latest_training_job.describe()["FailureReason"] == "AlgorithmError: CUDA out of memory"
    with pytest.raises(JobFailedError, match="CUDA out of memory"):
        est.latest_training_job.wait(logs="None")  # v2's _TrainingJob.wait(logs=...) values


def test_fit_refuses_an_unknown_log_type(tmp_path):
    est = _estimator(tmp_path, "v2-logs")
    with pytest.raises(ValueError, match=r"logs='Everything' is not a log choice; allowed: True, False, 'All'"):
        est.fit(logs="Everything")
    assert est.latest_training_job is None


def test_attach_of_an_unknown_job_names_it(sagemaker_env):
    with pytest.raises(JobNotFoundError, match="no local job named 'nobody-has-this-job'"):
        PyTorch.attach("nobody-has-this-job", region="us-west-2")


def test_ctrl_c_during_fit_with_stop_on_interrupt_stops_the_kept_job(sagemaker_env, tmp_path, terminal_ctrl_c):
    sagemaker_env.plan("v2-stop", Step("InProgress", "Starting", "Preparing"),
                       Step("InProgress", "Training", "Training", interrupt=True),
                       Step("InProgress", "Training", "Training"))
    est = _estimator(tmp_path, "v2-stop")
    with pytest.raises(KeyboardInterrupt):
        est.fit(stop_on_interrupt=True)
    assert len(sagemaker_env.proxy.calls("StopTrainingJob")) == 1
    assert est.latest_training_job.status in ("Stopping", "Stopped")


def test_generic_attach_of_a_script_mode_job_keeps_its_hyperparameters_and_refuses_a_refit(sagemaker_env, tmp_path):
    """v2's generic Estimator.attach of a framework job: the job's hyperparameters as it holds them (its
    sagemaker_program… included, no entry point); fitting it again would drop the script, so it is refused by name."""
    from sagelaunch.estimators import Estimator
    from sagelaunch.jobspec.errors import SagelaunchError

    est = _estimator(tmp_path, "v2-generic-attach")
    est.fit(wait=False)
    attached = Estimator.attach(est.latest_training_job.name, region="us-west-2")
    assert attached.hyperparameters() == est.latest_training_job.hyperparameters
    assert attached.hyperparameters()["sagemaker_program"] == '"train.py"' and attached.entry_point is None
    with pytest.raises(SagelaunchError, match="attached to the script-mode job .* PyTorch.attach") as refused:
        attached.fit(wait=False)
    assert refused.value.field == "entry_point"
