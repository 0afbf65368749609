"""The real SMP v1 GPT-2 example (aws/amazon-sagemaker-examples, vendored unchanged) trains in local jobs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.modelparallel.gpt2_example import EXAMPLE, run_example, validation_losses

NOTEBOOK_SMP_PARAMETERS = {  # the notebook's "parameters", at degree 1
    "ddp": True, "tensor_parallel_degree": 1, "partitions": 1, "shard_optimizer_state": False,
    "prescaled_batch": False, "fp16": False, "optimize": "speed", "auto_partition": False, "default_partition": 0,
}


def test_vendored_example_is_the_upstream_text():
    upstream = json.loads((EXAMPLE.parent / "upstream.json").read_text())
    for name, digest in upstream["sha256"].items():
        assert hashlib.sha256((EXAMPLE / name).read_bytes()).hexdigest() == digest, f"{name} differs from upstream"


def _completed(record, lines):
    assert record["TrainingJobStatus"] == "Completed", (record.get("FailureReason"), "\n".join(lines[-40:]))
    assert any("SMP training finished successfully" in line for line in lines)
    losses = validation_losses(lines)
    assert len(losses) == 4  # validation after each of the 4 steps
    assert len(set(losses)) > 1  # the model really trains
    return losses


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_example_trains_unchanged_with_equal_losses_at_degree1_and_dp2(tmp_path, monkeypatch):
    monkeypatch.setenv("SAGELAUNCH_HOME", str(tmp_path / "home"))
    one = _completed(*run_example(tmp_path, 1, NOTEBOOK_SMP_PARAMETERS, name="one"))
    # dp=2: each rank reads half the batch, so the global batch (and the data order) is the same as at degree 1
    record, lines = run_example(tmp_path, 2, NOTEBOOK_SMP_PARAMETERS, {"train_batch_size": 2, "val_batch_size": 2},
                                name="dp2")
    two = _completed(record, lines)
    assert any("smdistributed.modelparallel: sagelaunch's modelparallel" in line for line in lines)
    assert two == pytest.approx(one, abs=1e-5)
