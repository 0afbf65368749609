"""An unchanged SMP script through the local backend: estimator distribution → SM_HP_MP_PARAMETERS → smp.init."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest

from sagelaunch.estimators import PyTorch

pytestmark = pytest.mark.slow  # a real local job with torchrun


@pytest.mark.timeout(300)
def test_smp_parameters_reach_smp_init_through_the_local_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))  # a private job registry
    parameters = {"partitions": 2, "microbatches": 2, "pipeline": "simple"}
    estimator = PyTorch(
        entry_point="smp_train.py", source_dir=str(Path(__file__).with_name("job_src")),
        framework_version="2.0.0", py_version="py310", instance_type="local", output_path=str(tmp_path),
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": parameters}},
                      "mpi": {"enabled": True, "processes_per_host": 2}},
    )
    job = estimator.fit(wait=True, logs=False)
    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed", record.get("FailureReason")
    output = tmp_path / record["TrainingJobName"] / "output" / "output.tar.gz"
    with tarfile.open(fileobj=io.BytesIO(output.read_bytes())) as tar:
        reports = {m.name: json.load(tar.extractfile(m)) for m in tar.getmembers() if m.name.endswith(".json")}
    assert sorted(reports) == ["smp_rank0.json", "smp_rank1.json"]
    first, second = reports["smp_rank0.json"], reports["smp_rank1.json"]
    for report in (first, second):
        assert report["env"] == parameters  # delivered as the user wrote them, alias included
        assert report["pp_size"] == 2 and report["microbatches"] == 2
    assert (first["pp_rank"], second["pp_rank"]) == (0, 1)
    assert first["losses"] == second["losses"]  # the last stage's loss reaches every pipeline rank
    assert first["local_params"] == ["0.weight", "0.bias", "2.weight", "2.bias"]  # stage 0 of 3 Linear layers
    assert second["local_params"] == ["4.weight", "4.bias"]
