"""A TensorFlow job: the script runs directly on each host with TF_CONFIG, as SageMaker runs MultiWorkerMirroredStrategy."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from sagelaunch.jobspec.distribution import DistributionSpec
from sagelaunch.launcher.backends import submit
from tests.local.conftest import make_spec

pytestmark = pytest.mark.slow  # a local TensorFlow job on two hosts

# needs tensorflow-cpu (in the [test] extra): without it the job is rejected before it starts and this fails


def test_multi_worker_mirrored_job_on_two_hosts():
    spec = make_spec("tf_mwms.py", framework="tensorflow", framework_version="2.21", instance_count=2,
                     distribution=DistributionSpec(strategy="multi_worker_mirrored_strategy", given=True))
    job = submit(spec, wait=True, logs=False)
    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed", record.get("FailureReason")
    job_dir = Path(record["JobDir"])
    reports = [json.loads((job_dir / host / "output" / "data" / "report.json").read_text()) for host in ("algo-1", "algo-2")]
    # both workers joined one cluster of two replicas; with different data, the same weights prove the all-reduce
    assert [r["workers"] for r in reports] == [2, 2]
    assert [r["task"] for r in reports] == [{"type": "worker", "index": 0}, {"type": "worker", "index": 1}]
    assert reports[0]["weights"] == reports[1]["weights"] and reports[0]["losses"] == reports[1]["losses"]
    assert reports[0]["losses"][-1] < reports[0]["losses"][0]
    log = (job_dir / "logs" / "job.log").read_text()
    assert "[algo-1 rank0] worker 0 of 2 done" in log and "[algo-2 rank1] worker 1 of 2 done" in log
    with tarfile.open(job.model_data) as archive:
        assert archive.getnames() == ["weights.npy"]
