"""An unchanged SMP script through the local backend: estimator distribution → SM_HP_MP_PARAMETERS → smp.init."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from sagelaunch.estimators import PyTorch
from sagelaunch.launcher.common.jobs import JobFailedError

pytestmark = pytest.mark.slow  # a real local job with torchrun


PARAMETERS = {"partitions": 2, "microbatches": 2, "pipeline": "simple"}


def pipelined_job(tmp_path, **options) -> PyTorch:
    """job_src/smp_train.py at pp=2 on two local processes."""
    return PyTorch(
        entry_point="smp_train.py", source_dir=str(Path(__file__).with_name("job_src")),
        framework_version="2.0.0", py_version="py310", instance_type="local", output_path=str(tmp_path),
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": PARAMETERS}},
                      "mpi": {"enabled": True, "processes_per_host": 2}}, **options)


@pytest.mark.timeout(300)
def test_smp_parameters_reach_smp_init_through_the_local_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))  # a private job registry
    job = pipelined_job(tmp_path).fit(wait=True, logs=False)
    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed", record.get("FailureReason")
    output = tmp_path / record["TrainingJobName"] / "output" / "output.tar.gz"
    with tarfile.open(fileobj=io.BytesIO(output.read_bytes())) as tar:
        reports = {m.name: json.load(tar.extractfile(m)) for m in tar.getmembers() if m.name.endswith(".json")}
    assert sorted(reports) == ["smp_rank0.json", "smp_rank1.json"]
    first, second = reports["smp_rank0.json"], reports["smp_rank1.json"]
    for report in (first, second):
        assert report["env"] == PARAMETERS  # delivered as the user wrote them, alias included
        assert report["pp_size"] == 2 and report["microbatches"] == 2
    assert (first["pp_rank"], second["pp_rank"]) == (0, 1)
    assert first["losses"] == second["losses"]  # the last stage's loss reaches every pipeline rank
    assert first["local_params"] == ["0.weight", "0.bias", "2.weight", "2.bias"]  # stage 0 of 3 Linear layers
    assert second["local_params"] == ["4.weight", "4.bias"]


@pytest.mark.timeout(300)
def test_a_rank_failing_mid_pipeline_ends_the_job_at_once_with_its_own_error(tmp_path, monkeypatch):
    # stage 1 waits on stage 0's activations when rank 0 raises: rank 0 must leave at once, not sit in the exit
    # barrier its peer never reaches (60 s). The witness is the job's own max_run, well under that plus start-up:
    # the job must end Failed with rank 0's error, not be stopped for running too long
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    estimator = pipelined_job(tmp_path, hyperparameters={"fail_rank0_at_step": 1}, max_run=50)
    with pytest.raises(JobFailedError):
        estimator.fit(wait=True, logs=False)
    record = estimator.latest_training_job.describe()
    assert record["TrainingJobStatus"] == "Failed"
    assert "rank 0 fails at step 1" in record["FailureReason"], record["FailureReason"]
