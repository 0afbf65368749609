"""The real SMP v1 BERT pretraining example (aws/amazon-sagemaker-examples' sagemaker_smp_pretrain.py with its
modeling.py, schedulers.py, utils.py and file_utils.py, vendored; its mechanical changes listed in
tests/data/smp_examples/bert/upstream.json) run by `sagelaunch run` under real torchrun processes, with the
notebook's `--use_sequential 1 --smp 1` and tiny hdf5 shards in the example's format, at degree 1 and dp=2. Each run
equals one process of plain PyTorch doing what the script does (tests/modelparallel/bert_reference.py): the loss rank
0 prints each step, and every parameter of the partial checkpoint the script saves.

Not run here: the script at pp > 1. It seeds every rank with seed + local_rank, so the pipeline stages of one
replica draw different RandomSampler orders, and after the first file the stages read files chosen by world rank:
the stages would disagree on the batch. The model itself is pipelined in test_pipeline_tree.py."""

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
        positions = np.zeros((BATCH, PREDICTIONS), dtype=np.int64)
        positions[:, :2] = rng.integers(1, SEQ - 2, (BATCH, 2))
        with h5py.File(run / "data" / f"part_{i:02d}_training.hdf5", "w") as f:
            f["input_ids"], f["input_mask"] = ids, mask
            f["segment_ids"] = rng.integers(0, 2, (BATCH, SEQ))
            f["masked_lm_positions"] = positions
            f["masked_lm_ids"] = np.take_along_axis(ids, positions, 1) * (positions > 0)
            f["next_sentence_labels"] = rng.integers(0, 2, (BATCH,))
    (run / "bert_config.json").write_text(json.dumps(BERT_CONFIG))


def _clean_env(**extra: str) -> dict[str, str]:
    """The script prints os.environ first: give it only what it needs."""
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "OMP_NUM_THREADS": "1",
            "SMP_TIMEOUT_SECONDS": "120", **extra}


def _launch(root: Path, processes: int) -> tuple[list[str], dict[str, dict | None]]:
    code = prepared_copy("bert", root / "code")
    run = root / "run"
    _write_shards(run, files=STEPS * processes + 1)  # one per step and rank, and the one the script never reaches
    args = ["--input_dir", "data", "--config_file", "bert_config.json", "--output_dir", "out",
            "--max_seq_length", str(SEQ), "--max_predictions_per_seq", str(PREDICTIONS),
            "--train_batch_size", str(BATCH), "--learning_rate", str(LR), "--max_steps", str(MAX_STEPS),
            "--warmup_proportion", str(WARMUP), "--seed", str(SEED), "--steps_this_run", str(STEPS),
            "--do_train", "1", "--use_sequential", "1", "--smp", "1", "--disable_progress_bar", "1",
            "--num_steps_per_checkpoint", "1"]  # a checkpoint each step: the script keeps the newest 3
    done = subprocess.run([sys.executable, "-m", "sagelaunch", "run", "--mp-parameters", json.dumps({"ddp": True}),
                           "--framework-version", "1.6.0", "--nproc-per-node", str(processes),
                           str(code / "sagemaker_smp_pretrain.py"), *args],
                          cwd=run, env=_clean_env(), capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    # the last checkpoint's model (the earlier ones also pickle the script's data loader, of its __main__ classes)
    saved = {p.name: torch.load(p, weights_only=False)["model"] if p.name.startswith(f"ckpt_{STEPS}.") else None
             for p in sorted((run / "out").glob("ckpt_*"))}
    return done.stdout.splitlines(), saved


def _reference(root: Path, dp: int) -> dict:
    from sagelaunch.launcher.local.job_modules import JOB_MODULES, stand_in_paths

    path = os.pathsep.join([str(root / "code"), *stand_in_paths(JOB_MODULES, sys.executable)[0]])
    done = subprocess.run([sys.executable, str(REFERENCE), str(root / "run"), str(dp), str(STEPS), str(SEED),
                           str(LR), str(WARMUP), str(MAX_STEPS)], env=_clean_env(PYTHONPATH=path),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for name, processes in (("degree1", 1), ("dp2", 2)):
        root = tmp_path_factory.mktemp(f"bert_example_{name}")
        out[name] = (*_launch(root, processes), _reference(root, processes))
    return out


def test_the_vendored_files_are_upstreams_text_and_each_change_is_recorded():
    assert changed_files("bert") == []
    assert all(change["why"] for change in record("bert")["mechanical_changes"])


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", ["degree1", "dp2"])
def test_the_script_equals_one_process_in_losses_and_saved_parameters(runs, name):
    lines, saved, reference = runs[name]
    printed = [float(m.group(1)) for line in lines if (m := LOSS.match(line))]
    assert printed == pytest.approx([step[0] for step in reference["losses"]], abs=1e-5)  # rank 0's replica
    assert len(set(printed)) == STEPS  # it trains
    # dp rank 0 saved a partial checkpoint each step and removed all but the newest 3 by SMP 1.6's names,
    # <name>_<mp_rank> (os.remove(path + f"_{smp.mp_rank()}"): the rotation that failed when only <name>_<pp>_<tp>
    # was written)
    assert sorted(saved) == [f"ckpt_{step}.pt_0" for step in range(STEPS - 2, STEPS + 1)]
    last = saved[f"ckpt_{STEPS}.pt_0"]
    assert last is not None
    state = {k: v for k, v in last.items() if k != "_smp_is_partial"}
    assert set(state) == set(reference["params"])
    for key, value in state.items():
        assert torch.allclose(value, torch.tensor(reference["params"][key]), atol=1e-5), key
