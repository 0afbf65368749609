"""transformers' Trainer in a local job with SMP enabled: it takes its SMP path (smdistributed is importable), and
that path is CUDA-only. Shown here, not patched: on a CPU-only torch its TrainingArguments choose cuda:0."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sagelaunch.estimators import PyTorch
from sagelaunch.launcher.common.jobs import JobFailedError
from sagelaunch.launcher.local.job_modules import JOB_MODULES_ROOT

PROBE = """
import json, os, torch
from transformers import TrainingArguments
from transformers.utils import is_sagemaker_mp_enabled
args = TrainingArguments(output_dir=os.environ["PROBE_OUT"], report_to=[])
print(json.dumps({"smp_path": is_sagemaker_mp_enabled(), "device": str(args.device),
                  "cuda": torch.cuda.is_available()}))
"""


def test_trainer_takes_its_smp_path_which_is_cuda_only(tmp_path):
    env = {**os.environ, "SM_HP_MP_PARAMETERS": '{"partitions": 1, "ddp": true}',  # as a local SMP job sets them
           "SM_FRAMEWORK_PARAMS": '{"sagemaker_mpi_enabled": true}', "PROBE_OUT": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(JOB_MODULES_ROOT.parent), str(JOB_MODULES_ROOT / "smdistributed")])}
    out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["smp_path"] is True  # smdistributed resolves to sagelaunch's modelparallel
    if not got["cuda"]:
        assert got["device"] == "cuda:0"  # transformers' SMP path: torch.device("cuda", smp.local_rank())


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_trainer_without_partitions_never_completes_as_if_tp_ran(tmp_path, monkeypatch):
    # transformers takes its SMP path only when mp_parameters holds "partitions": without it the real Trainer
    # trains each rank as an independent process, and tensor_parallel_degree=2 would have done nothing
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    estimator = PyTorch(
        entry_point="trainer_gpt2.py", source_dir=str(Path(__file__).with_name("job_src")), framework_version="2.0.0",
        py_version="py310", instance_type="local", output_path=str(tmp_path),
        distribution={"smdistributed": {"modelparallel": {"enabled": True,
                                                          "parameters": {"tensor_parallel_degree": 2, "ddp": True}}},
                      "mpi": {"enabled": True, "processes_per_host": 2}})
    with pytest.raises(JobFailedError):
        estimator.fit(wait=True, logs=False)
    record = estimator.latest_training_job.describe()
    lines = list(estimator.latest_training_job.logs())
    assert sum("TRAINER FINISHED" in line for line in lines) == 2  # both ranks trained, each on its own
    assert record["TrainingJobStatus"] == "Failed"
    assert "tensor_parallel_degree=2, but no process called smp.init()" in record["FailureReason"]
    assert '"partitions"' in record["FailureReason"]
