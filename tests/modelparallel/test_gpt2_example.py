"""The real SMP v1 GPT-2 example (aws/amazon-sagemaker-examples, vendored unchanged) trains in local jobs."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.modelparallel.gpt2_example import EXAMPLE, run_example, validation_losses

NOTEBOOK_SMP_PARAMETERS = {  # the notebook's "parameters", at degree 1
    "ddp": True, "tensor_parallel_degree": 1, "partitions": 1, "shard_optimizer_state": False,
    "prescaled_batch": False, "fp16": False, "optimize": "speed", "auto_partition": False, "default_partition": 0,
}
HALF_BATCH = {"train_batch_size": 2, "val_batch_size": 2}  # dp=2: the same global batch and data order as degree 1


def test_vendored_example_is_the_upstream_text():
    upstream = json.loads((EXAMPLE.parent / "upstream.json").read_text())
    for name, digest in upstream["sha256"].items():
        assert hashlib.sha256((EXAMPLE / name).read_bytes()).hexdigest() == digest, f"{name} differs from upstream"


def _completed(record, lines, steps: int = 4):
    assert record["TrainingJobStatus"] == "Completed", (record.get("FailureReason"), "\n".join(lines[-40:]))
    assert any("SMP training finished successfully" in line for line in lines)
    losses = validation_losses(lines)
    assert len(losses) == steps  # validation after every step
    return losses


@pytest.fixture(scope="module")
def jobs(tmp_path_factory):
    """Runs the example in local jobs under a private job registry; the degree-1 run is shared."""
    root = tmp_path_factory.mktemp("gpt2_example")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SAGELAUNCH_HOME", str(root / "home"))

        def run(name: str, processes: int, parameters: dict | None = None, **hyperparameters):
            return run_example(root, processes, {**NOTEBOOK_SMP_PARAMETERS, **(parameters or {})}, hyperparameters,
                               name=name)

        degree1 = _completed(*run("degree1", 1))
        assert len(set(degree1)) > 1  # the model really trains
        run.degree1 = degree1
        yield run


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_example_trains_unchanged_with_equal_losses_at_degree1_and_dp2(jobs):
    record, lines = jobs("dp2", 2, **HALF_BATCH)
    assert any("smdistributed.modelparallel: sagelaunch's modelparallel" in line for line in lines)
    assert _completed(record, lines) == pytest.approx(jobs.degree1, abs=1e-5)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_shard_optimizer_state_keeps_the_examples_weight_decay_groups(jobs):
    # the example gives LayerNorm weights and biases weight_decay=0: a merged group would change the numbers
    record, lines = jobs("dp2_sharded", 2, {"shard_optimizer_state": True}, shard_optimizer_state=1, **HALF_BATCH)
    assert _completed(record, lines) == pytest.approx(jobs.degree1, abs=1e-5)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_checkpoint_then_resume_reproduces_the_uninterrupted_run(jobs, tmp_path):
    checkpoints = str(tmp_path / "checkpoints")
    first = _completed(*jobs("until_step2", 1, max_steps=2, checkpoint_freq=2, **{"checkpoint-dir": checkpoints}),
                       steps=2)
    record, lines = jobs("resumed", 1, load_partial=1, **{"checkpoint-dir": checkpoints})
    assert any("Resuming from saved batch index 2" in line for line in lines)
    assert first + _completed(record, lines, steps=2) == pytest.approx(jobs.degree1, abs=1e-6)
