"""The real SMP v1 GPT-2 example (aws/amazon-sagemaker-examples, vendored unchanged) trains in local jobs at every
SMP configuration it offers: its validation losses equal the same script at degree 1 (same seed) within 1e-5, and
the partial checkpoint the script itself saves (smp.save_checkpoint(partial=True), one file per rank that saves)
holds only each rank's shard — equal losses alone cannot tell sharding from replicas."""

from __future__ import annotations

import functools
import hashlib
import json
import math
import re
import shutil
from pathlib import Path

import pytest
import torch

from tests.modelparallel.gpt2_example import (
    FULL_SHAPES, TP2_SHARDS, EXAMPLE, JobPool, run_example, saved_partial_model, shape_of, validation_losses,
)

NOTEBOOK_SMP_PARAMETERS = {  # the notebook's "parameters", at degree 1
    "ddp": True, "tensor_parallel_degree": 1, "partitions": 1, "shard_optimizer_state": False,
    "prescaled_batch": False, "fp16": False, "optimize": "speed", "auto_partition": False, "default_partition": 0,
}
HALF_BATCH = {"train_batch_size": 2, "val_batch_size": 2}  # dp=2: the same global batch and data order as degree 1
# SMP's dp group holds the tensor-parallel ranks too (the script reads smp.dp_size() shards of the data): at tp=2
# each rank reads half the batch and the tp group runs the concatenated (scaled) batch, as degree 1 does
TP2 = {"tensor_parallel_degree": 2}
PP2 = {"partitions": 2, "microbatches": 2}
SAVE_LAST = {"checkpoint_freq": 4}  # the script saves its partial checkpoint after the last step
UDT = {"use_distributed_transformer": 1, "checkpoint_sublayers": 1}
DELAYED_OFFLOAD = {**TP2, "delayed_parameter_initialization": True, "offload_activations": True}
# every job of the module: name → (processes, SMP parameters, the script's hyperparameters)
JOBS: dict[str, tuple[int, dict, dict]] = {
    "degree1": (1, {}, {}),
    "dp2_sharded": (2, {"shard_optimizer_state": True}, {"shard_optimizer_state": 1, **HALF_BATCH, **SAVE_LAST}),
    # tp=2, checkpoints after steps 2 and 4 (the resume test continues from step 2)
    "tp2": (2, TP2, {"tensor_parallel_degree": 2, "checkpoint_freq": 2, **HALF_BATCH}),
    "udt_degree1": (1, {}, UDT),
    "udt_tp2": (2, TP2, {"tensor_parallel_degree": 2, **UDT, **HALF_BATCH, **SAVE_LAST}),
    # the script resumes from the newest partial checkpoint of its folder: a folder holding tp2's step 2
    "tp2_resumed": (2, TP2, {"tensor_parallel_degree": 2, "load_partial": 1, **HALF_BATCH}),
    "pp2": (2, PP2, {"pipeline_parallel_degree": 2, "microbatches": 2, **SAVE_LAST}),
    # 4 ranks: 2 replicas of a tp=2 model; smp.dp_size() is 4, so each rank reads a quarter of the batch
    "tp2_dp2": (4, TP2, {"tensor_parallel_degree": 2, "train_batch_size": 1, "val_batch_size": 1, **SAVE_LAST}),
    "pp2_tp2": (4, {**PP2, **TP2}, {"pipeline_parallel_degree": 2, "microbatches": 2, "tensor_parallel_degree": 2,
                                    **HALF_BATCH, **SAVE_LAST}),
    # sdp_gradient_clipping=0: SMP clips sharded-DP gradients to norm 1.0 by default, which degree 1 does not
    "sdp2": (2, {"sharded_data_parallel_degree": 2, "sdp_gradient_clipping": 0.0},
             {"sharded_data_parallel_degree": 2, **HALF_BATCH, **SAVE_LAST}),
    "degree1_delayed": (1, {"delayed_parameter_initialization": True}, {"delayed_param": 1}),
    "tp2_delayed_offload": (2, DELAYED_OFFLOAD, {"tensor_parallel_degree": 2, "delayed_param": 1,
                                                 "offload_activations": 1, **HALF_BATCH, **SAVE_LAST}),
}
# the jobs each test reads (the degree-1 run: every equal-losses test's reference)
NEEDS = {
    "test_shard_optimizer_state_keeps_the_examples_weight_decay_groups": ["dp2_sharded"],
    "test_tp2_shards_the_examples_gpt2_with_equal_losses": ["tp2"],
    "test_the_examples_default_distributed_transformer_path_shards_with_equal_losses": ["udt_degree1", "udt_tp2"],
    "test_tp2_checkpoint_then_resume_reproduces_the_uninterrupted_run": ["tp2", "tp2_resumed"],
    "test_pp2_runs_the_examples_module_tree_in_two_stages_with_equal_losses": ["pp2"],
    "test_tp2_dp2_shards_within_each_replica_with_equal_losses": ["tp2_dp2"],
    "test_pp2_tp2_shards_each_stage_with_equal_losses": ["pp2_tp2"],
    "test_sharded_data_parallel_2_holds_half_of_every_parameter_with_equal_losses": ["sdp2"],
    "test_delayed_initialization_with_offloaded_activations_at_tp2": ["degree1_delayed", "tp2_delayed_offload"],
}


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


class Jobs:
    """The module's jobs (JOBS) that the selected tests read, in local jobs under a private job registry, started
    together when the first test needs one (JobPool: two at a time); the degree-1 run is every test's reference."""

    def __init__(self, root: Path, names: list[str]):
        self.root = root
        self.pool = JobPool(self._launch, names, prepare=self._prepare)

    def checkpoints(self, name: str) -> Path:
        return self.root / f"{name}_checkpoints"

    def _prepare(self, name: str) -> None:
        if name == "tp2_resumed":  # a folder holding only tp2's checkpoint of step 2, named newest
            self.pool.result("tp2")
            resume_from = self.checkpoints(name)
            shutil.copytree(self.checkpoints("tp2") / "total_steps2_partial", resume_from / "total_steps2_partial")
            (resume_from / "newest").write_text("total_steps2_partial\n")

    def _launch(self, name: str) -> tuple[dict, list[str]]:
        processes, parameters, hyperparameters = JOBS[name]
        return run_example(self.root, processes, {**NOTEBOOK_SMP_PARAMETERS, **parameters},
                           {"checkpoint-dir": str(self.checkpoints(name)), **hyperparameters}, name=name)

    def __call__(self, name: str) -> tuple[dict, list[str]]:
        """The job's describe() record and log lines."""
        return self.pool.result(name)

    @functools.cached_property
    def degree1(self) -> list[float]:
        degree1 = _completed(*self("degree1"))
        assert len(set(degree1)) > 1  # the model really trains
        return degree1


@pytest.fixture(scope="module")
def jobs(request, tmp_path_factory):
    root = tmp_path_factory.mktemp("gpt2_example")
    selected = {item.originalname for item in request.session.items if item.module is request.module}
    names = ["degree1"] + [name for name in JOBS if any(name in NEEDS.get(test, []) for test in selected)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("SAGELAUNCH_HOME", str(root / "home"))
        jobs = Jobs(root, names)
        try:
            yield jobs
        finally:
            jobs.pool.close()


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_shard_optimizer_state_keeps_the_examples_weight_decay_groups(jobs):
    # dp=2 (the same global batch as degree 1), ZeRO-1 over the replicas; the example gives LayerNorm weights and
    # biases weight_decay=0: a merged group would change the numbers
    record, lines = jobs("dp2_sharded")
    assert _completed(record, lines) == pytest.approx(jobs.degree1, abs=1e-5)
    # each rank saved the Adam state of its own share of the parameters, both weight-decay groups kept
    folder = jobs.checkpoints("dp2_sharded") / "total_steps4_partial"
    saved = [torch.load(folder / f"optimizer_0_0_{r}.pt", weights_only=False) for r in (0, 1)]
    held = [len(s["state"]) for s in saved]
    assert min(held) > 0 and sum(held) == 28, held  # the example's GPT-2 has 28 parameter tensors
    assert all(sorted(g["weight_decay"] for g in s["param_groups"]) == [0.0, 0.01] for s in saved)


# ----- model parallelism: equal losses AND per-rank shards in the script's own partial checkpoint
def _blocks(suffix: str, blocks=(0, 1)) -> list[str]:
    return [f"transformer.h.{b}.{suffix}" for b in blocks]


def _assert_tp2_shards(files: dict, pair: tuple[str, str], blocks=(0, 1)) -> None:
    """Both tensor-parallel ranks hold half of each distributed parameter, and different halves."""
    for name, shard in TP2_SHARDS.items():
        names = [name] if name.startswith("transformer.") else _blocks(name, blocks)
        for full_name in names:
            if full_name == "transformer.wte.weight" and full_name not in files[pair[0]]:
                continue  # a later pipeline stage without the embedding
            shapes = [shape_of(files[f], full_name) for f in pair]
            assert shapes == [shard, shard], f"{full_name}: {shapes}, expected the shard {shard} on both ranks"
            assert not torch.equal(files[pair[0]][full_name], files[pair[1]][full_name]), f"{full_name}: replicas"


@pytest.fixture(scope="module")
def tp2_run(jobs):
    """tp=2, checkpoints after steps 2 and 4 (the resume test continues from step 2)."""
    record, lines = jobs("tp2")
    return _completed(record, lines), jobs.checkpoints("tp2"), lines


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_tp2_shards_the_examples_gpt2_with_equal_losses(jobs, tp2_run):
    losses, checkpoints, lines = tp2_run
    assert any("smdistributed.modelparallel: sagelaunch's modelparallel" in line for line in lines)
    assert losses == pytest.approx(jobs.degree1, abs=1e-5)
    files = saved_partial_model(checkpoints)
    assert sorted(files) == ["model_0_0.pt", "model_0_1.pt"]  # (pp_rank, tp_rank)
    _assert_tp2_shards(files, ("model_0_0.pt", "model_0_1.pt"))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_examples_default_distributed_transformer_path_shards_with_equal_losses(jobs):
    # use_distributed_transformer=1, the script's default: the model is created for tensor parallelism at every degree,
    # Hugging Face's weight init is skipped, and the script walks SMP's tree — transformer.seq_layers, and with
    # checkpoint_sublayers=1 each layer's .attention and .output
    degree1 = _completed(*jobs("udt_degree1"))
    assert len(set(degree1)) > 1 and degree1 != pytest.approx(jobs.degree1, abs=1e-5)  # its own initialisation
    record, lines = jobs("udt_tp2")
    assert _completed(record, lines) == pytest.approx(degree1, abs=1e-5)
    _assert_tp2_shards(saved_partial_model(jobs.checkpoints("udt_tp2")), ("model_0_0.pt", "model_0_1.pt"))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_tp2_checkpoint_then_resume_reproduces_the_uninterrupted_run(jobs, tp2_run):
    # the script resumes from the newest partial checkpoint of its folder: a folder holding step 2's (Jobs._prepare)
    record, lines = jobs("tp2_resumed")
    assert any("Resuming from saved batch index 2" in line for line in lines)
    assert _completed(record, lines, steps=2) == pytest.approx(jobs.degree1[2:], abs=1e-5)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_pp2_runs_the_examples_module_tree_in_two_stages_with_equal_losses(jobs):
    # the script assigns transformer.h's layers with smp.set_partition after wrapping: SMP partitions at the first
    # step, so the marks count
    record, lines = jobs("pp2")
    assert _completed(record, lines) == pytest.approx(jobs.degree1, abs=1e-5)
    files = saved_partial_model(jobs.checkpoints("pp2"))
    assert sorted(files) == ["model_0_0.pt", "model_1_0.pt"]
    first, last = files["model_0_0.pt"], files["model_1_0.pt"]
    assert {"transformer.wte.weight", "transformer.wpe.weight", "transformer.h.0.mlp.c_fc.weight"} <= set(first)
    assert not any(k.startswith(("transformer.h.1.", "transformer.ln_f.")) for k in first)
    assert {"transformer.h.1.mlp.c_fc.weight", "transformer.ln_f.weight"} <= set(last)
    assert not any(k.startswith("transformer.h.0.") for k in last)
    assert shape_of(first, "transformer.h.0.attn.c_attn.weight") == FULL_SHAPES["attn.c_attn.weight"]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_tp2_dp2_shards_within_each_replica_with_equal_losses(jobs):
    # 4 ranks: 2 replicas of a tp=2 model; smp.dp_size() is 4, so each rank reads a quarter of the batch
    record, lines = jobs("tp2_dp2")
    assert _completed(record, lines) == pytest.approx(jobs.degree1, abs=1e-5)
    files = saved_partial_model(jobs.checkpoints("tp2_dp2"))
    assert sorted(files) == ["model_0_0.pt", "model_0_1.pt"]  # replica 0 saves
    _assert_tp2_shards(files, ("model_0_0.pt", "model_0_1.pt"))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_pp2_tp2_shards_each_stage_with_equal_losses(jobs):
    record, lines = jobs("pp2_tp2")
    assert _completed(record, lines) == pytest.approx(jobs.degree1, abs=1e-5)
    files = saved_partial_model(jobs.checkpoints("pp2_tp2"))
    assert sorted(files) == ["model_0_0.pt", "model_0_1.pt", "model_1_0.pt", "model_1_1.pt"]
    _assert_tp2_shards(files, ("model_0_0.pt", "model_0_1.pt"), blocks=(0,))
    _assert_tp2_shards(files, ("model_1_0.pt", "model_1_1.pt"), blocks=(1,))
    assert not any(k.startswith("transformer.h.1.") for k in files["model_0_0.pt"])


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_sharded_data_parallel_2_holds_half_of_every_parameter_with_equal_losses(jobs):
    # sdp_gradient_clipping=0: SMP clips sharded-DP gradients to norm 1.0 by default, which degree 1 does not
    record, lines = jobs("sdp2")
    assert _completed(record, lines) == pytest.approx(jobs.degree1, abs=1e-5)
    files = saved_partial_model(jobs.checkpoints("sdp2"))
    assert sorted(files) == ["model_0_0_0.pt", "model_0_0_1.pt"]  # every rank saves its own shard
    for name, full in FULL_SHAPES.items():
        for full_name in [name] if name.startswith("transformer.") else _blocks(name):
            shapes = [shape_of(f, full_name) for f in files.values()]
            assert shapes == [(math.ceil(full[0] / 2), *full[1:])] * 2, f"{full_name}: {shapes} of {full}"


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_delayed_initialization_with_offloaded_activations_at_tp2(jobs):
    # a delayed model's parameters are drawn after construction (the meta device draws nothing), so its reference
    # is the same script at degree 1 with delayed_param too; offloading and checkpointing change no numbers
    reference = _completed(*jobs("degree1_delayed"))
    record, lines = jobs("tp2_delayed_offload")
    assert _completed(record, lines) == pytest.approx(reference, abs=1e-5)
    _assert_tp2_shards(saved_partial_model(jobs.checkpoints("tp2_delayed_offload")), ("model_0_0.pt", "model_0_1.pt"))
    offloaded = [int(m.group(1)) for line in lines if (m := re.search(r"offload_activations: (\d+) saved tensors", line))]
    assert len(offloaded) == 2 and min(offloaded) > 0  # both ranks' activations went through the offloader
