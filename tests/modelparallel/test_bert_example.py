"""The real SMP v1 BERT pretraining example (aws/amazon-sagemaker-examples' sagemaker_smp_pretrain.py with its
modeling.py, schedulers.py, utils.py and file_utils.py, vendored; its mechanical changes listed in
tests/data/smp_examples/bert/upstream.json) run by `sagelaunch run` under real torchrun processes, with the
notebook's `--use_sequential 1 --smp 1` and tiny hdf5 shards in the example's format, at degree 1, dp=2, pp=2 (simple
schedule, 2 microbatches; interleaved, 4) and pp2×dp2, one launch per layout. Each run equals one process of plain
PyTorch doing what the script does under SMP v1 (tests/modelparallel/bert_reference.py): the loss rank 0 prints each
step, and every parameter of the partial checkpoints the script saves (at pp=2 each stage's own parameters, disjoint,
together the whole model).

At pp > 1 the script gives the stages of one replica different data: it seeds every rank with seed + local_rank, and
after the first file it reads files chosen by world rank. SMP v1 runs an @smp.step function on pp_rank 0's arguments
only (its step.py: pp_rank 0 leads the step, the others follow and never read theirs), so the batch each replica trains
on is its pp_rank 0's, as here (sagelaunch warns once that the other stage's data went unread); each stage keeps the
weights its own rank drew (SMP v1 broadcasts only within a data-parallel group), as the reference does.

Every row of a shard masks the same number of tokens, so the masked-LM loss of a whole batch is the mean of its
microbatches' (SMP's reduce_mean and gradient averaging) whatever order the script's RandomSampler draws the rows in."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from tests.conftest import RUN_ENV
from tests.modelparallel.tree_models import BERT_CONFIG, BERT_VOCAB
from tests.modelparallel.vendored_example import changed_files, prepared_copy, record

REFERENCE = Path(__file__).with_name("bert_reference.py")
SEQ, PREDICTIONS, BATCH, STEPS, SEED, LR, WARMUP, MAX_STEPS = 8, 4, 4, 5, 12439, 6e-3, 0.2843, 10
LOSS = re.compile(r"^Loss: ([-0-9.e]+)$")


def _write_shards(run: Path, files: int) -> None:
    """hdf5 shards as the example's data preparation writes them (input_ids, input_mask, segment_ids,
    masked_lm_positions/ids padded with 0, next_sentence_labels), one batch each, and its bert_config.json scaled
    down (the notebook's file keys; dropout 0 as there)."""
    import h5py

    rng = np.random.default_rng(0)
    (run / "data").mkdir(parents=True)
    for i in range(files):
        ids = rng.integers(1, BERT_VOCAB, (BATCH, SEQ))
        mask = np.ones((BATCH, SEQ), dtype=np.int64)
        mask[::2, -2:] = 0
        positions = np.zeros((BATCH, PREDICTIONS), dtype=np.int64)  # two distinct masked tokens a row, then 0s
        positions[:, :2] = [sorted(rng.choice(np.arange(1, SEQ - 2), 2, replace=False)) for _ in range(BATCH)]
        with h5py.File(run / "data" / f"part_{i:02d}_training.hdf5", "w") as f:
            f["input_ids"], f["input_mask"] = ids, mask
            f["segment_ids"] = rng.integers(0, 2, (BATCH, SEQ))
            f["masked_lm_positions"] = positions
            f["masked_lm_ids"] = np.take_along_axis(ids, positions, 1) * (positions > 0)
            f["next_sentence_labels"] = rng.integers(0, 2, (BATCH,))
    (run / "bert_config.json").write_text(json.dumps(BERT_CONFIG))


def _clean_env(**extra: str) -> dict[str, str]:
    """The script prints os.environ first: give it only what it needs."""
    return {"PATH": os.environ["PATH"], **RUN_ENV, "OMP_NUM_THREADS": "1", "SMP_TIMEOUT_SECONDS": "120", **extra}


# name: (processes, mp_parameters); the stages' data differ at pp > 1 (see the module doc)
LAYOUTS = {
    "degree1": (1, {"ddp": True}),
    "dp2": (2, {"ddp": True}),
    "pp2_simple_mb2": (2, {"ddp": True, "pipeline_parallel_degree": 2, "microbatches": 2, "pipeline": "simple"}),
    "pp2_interleaved_mb4": (2, {"ddp": True, "pipeline_parallel_degree": 2, "microbatches": 4}),
    "pp2_dp2": (4, {"ddp": True, "pipeline_parallel_degree": 2, "microbatches": 2}),
}


def _launch(root: Path, processes: int, parameters: dict) -> tuple[str, dict[str, dict | None]]:
    code = prepared_copy("bert", root / "code")
    run = root / "run"
    _write_shards(run, files=STEPS * processes + 1)  # one per step and rank, and the one the script never reaches
    args = ["--input_dir", "data", "--config_file", "bert_config.json", "--output_dir", "out",
            "--max_seq_length", str(SEQ), "--max_predictions_per_seq", str(PREDICTIONS),
            "--train_batch_size", str(BATCH), "--learning_rate", str(LR), "--max_steps", str(MAX_STEPS),
            "--warmup_proportion", str(WARMUP), "--seed", str(SEED), "--steps_this_run", str(STEPS),
            "--do_train", "1", "--use_sequential", "1", "--smp", "1", "--disable_progress_bar", "1",
            "--num_steps_per_checkpoint", "1"]  # a checkpoint each step: the script keeps the newest 3
    done = subprocess.run([sys.executable, "-m", "sagelaunch", "run", "--mp-parameters", json.dumps(parameters),
                           "--framework-version", "1.6.0", "--nproc-per-node", str(processes),
                           str(code / "sagemaker_smp_pretrain.py"), *args],
                          cwd=run, env=_clean_env(), capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    # the last checkpoint's model (the earlier ones also pickle the script's data loader, of its __main__ classes)
    saved = {p.name: torch.load(p, weights_only=False)["model"] if p.name.startswith(f"ckpt_{STEPS}.") else None
             for p in sorted((run / "out").glob("ckpt_*"))}
    return done.stdout + done.stderr, saved


def _stages(saved: dict[str, dict | None], pp: int) -> dict[str, int] | None:
    """Which stage's last partial checkpoint holds each parameter (SMP 1.6 names them <name>_<mp_rank>)."""
    if pp == 1:
        return None
    return {key: stage for stage in range(pp) for key in saved.get(f"ckpt_{STEPS}.pt_{stage}") or {}
            if key != "_smp_is_partial"}


def _reference(root: Path, dp: int, pp: int, stages: dict[str, int] | None) -> dict:
    from sagelaunch.launcher.local.job_modules import JOB_MODULES, stand_in_paths

    path = os.pathsep.join([str(root / "code"), *stand_in_paths(JOB_MODULES, sys.executable)[0]])
    settings = {"dp": dp, "pp": pp, "steps": STEPS, "seed": SEED, "lr": LR, "warmup": WARMUP, "max_steps": MAX_STEPS,
                "stages": stages}
    done = subprocess.run([sys.executable, str(REFERENCE), str(root / "run"), json.dumps(settings)],
                          env=_clean_env(PYTHONPATH=path), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each layout launched once, when a test first asks for it (so `-k` runs only the launches it needs)."""
    done: dict[str, tuple] = {}

    def run(name: str) -> tuple:
        if name not in done:
            processes, parameters = LAYOUTS[name]
            pp = parameters.get("pipeline_parallel_degree", 1)
            root = tmp_path_factory.mktemp(f"bert_example_{name}")
            output, saved = _launch(root, processes, parameters)
            done[name] = (output, saved, _reference(root, processes // pp, pp, _stages(saved, pp)), pp)
        return done[name]

    return run


def test_the_vendored_files_are_upstreams_text_and_each_change_is_recorded():
    assert changed_files("bert") == []
    assert all(change["why"] for change in record("bert")["mechanical_changes"])


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", list(LAYOUTS))
def test_the_script_equals_one_process_in_losses_and_saved_parameters(runs, name):
    output, saved, reference, pp = runs(name)
    printed = [float(m.group(1)) for line in output.splitlines() if (m := LOSS.match(line))]
    assert printed == pytest.approx([step[0] for step in reference["losses"]], abs=1e-5)  # rank 0's replica
    assert len(set(printed)) == STEPS  # it trains
    # dp rank 0 of each stage saved a partial checkpoint each step and removed all but the newest 3 by SMP 1.6's
    # names, <name>_<mp_rank> (os.remove(path + f"_{smp.mp_rank()}"): the rotation that failed when only
    # <name>_<pp>_<tp> was written)
    assert sorted(saved) == sorted(f"ckpt_{step}.pt_{stage}" for step in range(STEPS - 2, STEPS + 1)
                                   for stage in range(pp))
    held: dict[str, int] = {}
    for stage in range(pp):
        last = saved[f"ckpt_{STEPS}.pt_{stage}"]
        assert last is not None and last["_smp_is_partial"]
        state = {k: v for k, v in last.items() if k != "_smp_is_partial"}
        assert state and (set(state) < set(reference["params"]) if pp > 1 else set(state) == set(reference["params"]))
        for key, value in state.items():
            assert torch.allclose(value, torch.tensor(reference["params"][key]), atol=1e-5), (stage, key)
            held[key] = held.get(key, 0) + 1
    assert held == dict.fromkeys(reference["params"], 1)  # each parameter on one stage, together the whole model
    if pp > 1:  # the script's stages loaded different batches; the step ran on pp_rank 0's, as in SMP v1
        assert "pp_rank 1 passed other data than pp_rank 0" in output
