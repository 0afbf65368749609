"""The May 2022 SMP v1 GPT-2 example (aws/amazon-sagemaker-examples at ccc102a4, vendored in
tests/data/smp_examples/gpt2_2022) trained with --fp16 1 as the script enables it: its own fp16 utilities
(FP16_Module, FP16_Optimizer(use_smp=True) with its DynamicLossScaler and fp32 master weights, apex's kernels through
tests/modelparallel/apex_multi_tensor_standin.py), run by `sagelaunch run` under real torchrun at degree 1,
tensor_parallel_degree=2, pipeline_parallel_degree=2 (microbatches 2) and both, 24 steps on the CPU in real fp16
(every parameter, activation and gradient of the model is torch.float16; the masters are fp32).

What is checked, from one launch per layout:
- the script's dynamic loss scaling really runs: it starts at 2**32, every step overflows fp16 and is skipped until the
  scale is small enough (the losses of the second pass over the data equal the first's exactly: no update happened),
  then the model trains; every layout ends at the same scale, 2**17;
- tp=2 equals degree 1: the printed training and validation losses within 5e-4. Both runs start from the same
  weights (--match_weights 1) and do the same fp16 arithmetic except that the tensor-parallel layers sum partial
  products of the sharded dimension across ranks: each rounding of an fp16 value moves it by at most 2**-11
  (4.9e-4) relatively, and the losses (about 4.6) differ by about 5e-5; a lost gradient or a wrong shard moves them
  by more than 1e-3 within two trained steps;
- the partial checkpoint each rank saves (smp.save with partial=True) holds its own shard: the model's half of every
  distributed parameter in fp16, and the script's fp32 masters of the same shapes, each master equal to its
  parameter when rounded to fp16;
- pp=2 equals degree 1: the same loss-scale trajectory (the saved DynamicLossScaler: scale, last overflowing step,
  hysteresis), the same skipped steps, and the printed losses within 2e-4. The pipeline does degree 1's fp16
  arithmetic on half-batches: the same per row, but each weight gradient is the fp16 sum of two microbatches' partial
  sums (one more rounding, at most 2**-11 relatively) and the printed loss the mean of two microbatch means; the
  16 skipped steps' losses agree within 2 fp32 ulps (1e-6), the trained ones within 3e-5 (measured), so 2e-4 leaves
  about 7x room. What this guards against moves them further: the microbatches' gradients of their unscaled mean
  losses summed in fp16 overflow at 2**17 (one more skipped step, final scale 2**16, losses 2e-2 apart), and the
  tied embedding counted on both stages in the script's clipped gradient norm (2.77 instead of 2.48) moves them
  by up to 6e-3 within 7 trained steps. pp=2 x tp=2 adds tp's sums of partial products, so it is held to tp's 5e-4
  (measured 5e-5); without its stage's tensor-parallel shards in the script's optimizer it trained only the
  replicated parameters (losses 9e-2 apart);
- each pipeline stage's partial checkpoint holds its own layers only (transformer.h.0 on the first, h.1 and ln_f on
  the last), the embedding they tie on both (the last stage's lm_head is a copy of wte, equal on both), and the
  script's fp32 masters of exactly those parameters; at tp=2 each rank of a stage its halves of them."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.modelparallel.gpt2_example import FULL_SHAPES, TP2_SHARDS
from tests.modelparallel.vendored_example import changed_files, prepared_copy, record

STANDIN = Path(__file__).with_name("apex_multi_tensor_standin.py")
CONTEXT, VOCAB, ROWS, BATCH, STEPS = 16, 96, 32, 4, 24  # 8 batches a pass, the script's default 3 passes
LOSS = re.compile(r"Batch (\d+) Loss: ([-0-9.e]+)")
VALIDATION = re.compile(r"Batch (\d+) Validation loss: ([-0-9.e]+)")
CHECKPOINT = f"trained_gpt_nparams-107264_steps-{STEPS}.pt"  # the example's name: its parameter count and step

# the notebook's hyperparameters scaled down to a 2-layer, 64-wide GPT-2 (as tests/modelparallel/gpt2_example.py),
# fp16 on, dropout 0, the same initial weights at every tp degree, one checkpoint after the last step
HYPERPARAMETERS = {
    "max_steps": STEPS, "seed": 12345, "fp16": 1, "lr": 2.0e-3, "lr_decay_iters": 64, "min_lr": 0.00001,
    "lr_decay_style": "linear", "warmup": 0.01, "checkpoint_freq": STEPS, "logging_freq": 1, "manual_partition": 1,
    "activation_checkpointing": 1, "zipped_data": 0, "validation_freq": 8, "validation_batches": 2,
    "max_context_width": CONTEXT, "hidden_width": 64, "num_layers": 2, "num_heads": 2, "vocab_size": VOCAB,
    "prescaled_batch": 0, "match_weights": 1,
    "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0, "summary_first_pdrop": 0.0,
}


def _write_data(run: Path) -> None:
    """train/ and test/ channels: JSON lines of input_ids and attention_mask, data_pipeline.py's openwebtext format."""
    rng = random.Random(0)
    for name in ("train", "test"):
        (run / name).mkdir(parents=True)
        with open(run / name / f"{name}_000.json", "w") as f:
            for _ in range(ROWS):
                ids = [rng.randrange(VOCAB) for _ in range(CONTEXT)]
                f.write(json.dumps({"input_ids": ids, "attention_mask": [1] * CONTEXT}) + "\n")


def _env(run: Path, **extra: str) -> dict[str, str]:
    """The SageMaker variables the script reads as argparse defaults, and nothing else of this process."""
    return {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/tmp"), "OMP_NUM_THREADS": "1",
            "SMP_TIMEOUT_SECONDS": "120", "SM_NUM_GPUS": "0", "SM_OUTPUT_DATA_DIR": str(run / "output"),
            "SM_MODEL_DIR": str(run / "model"), "SM_CHANNEL_TRAIN": str(run / "train"),
            "SM_CHANNEL_TEST": str(run / "test"), **extra}


def _run_script(root: Path, tp: int, pp: int = 1) -> tuple[Path, Path, subprocess.CompletedProcess]:
    code = prepared_copy("gpt2_2022", root / "code", extra=(STANDIN,))
    run = root / "run"
    _write_data(run)
    # SMP's dp group holds the tp ranks (the script reads smp.dp_size() shards): each rank reads BATCH // tp rows
    hp = {**HYPERPARAMETERS, "tensor_parallel_degree": tp, "pipeline_parallel_degree": pp, "microbatches": pp,
          "train_batch_size": BATCH // tp, "val_batch_size": BATCH // tp, "training-dir": run / "train",
          "test-dir": run / "test", "checkpoint-dir": run / "checkpoints", "model-dir": run / "model",
          "output-data-dir": run / "output"}
    args = [item for key, value in hp.items() for item in (f"--{key}", str(value))]
    done = subprocess.run([sys.executable, "-m", "sagelaunch", "run", "--nproc-per-node", str(tp * pp),
                           str(code / "train_gpt_simple.py"), *args],
                          cwd=run, env=_env(run), capture_output=True, text=True, timeout=500)
    return code, run, done


def _launch(root: Path, tp: int, pp: int) -> dict:
    code, run, done = _run_script(root, tp, pp)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-4000:]
    return {"lines": done.stdout.splitlines(), "saved": _saved_shapes(code, run, tp, pp)}


def _saved_shapes(code: Path, run: Path, tp: int, pp: int) -> list[dict]:
    """Each rank's partial checkpoint (pp_rank-major), read in a process that can unpickle the script's loss scaler
    (its module imports smdistributed, so the job modules' stand-in path is on PYTHONPATH)."""
    from sagelaunch.launcher.local.job_modules import JOB_MODULES, stand_in_paths

    reader = """
import json, sys, torch
out = []
for path in sys.argv[1:]:
    sd = torch.load(path, weights_only=False)
    model, opt = sd["model"], sd["optimizer"]
    masters = [m for group in opt["fp32_from_fp16"] for m in group]
    out.append({
        "model": {k: [list(v.shape), str(v.dtype)] for k, v in model.items() if hasattr(v, "shape")},
        "masters": [[list(m.shape), str(m.dtype)] for m in masters],
        "masters_round_to_model": all(any(m.shape == v.shape and torch.equal(m.half(), v) for m in masters)
                                      for v in model.values() if hasattr(v, "shape")),
        "loss_scale": opt["loss_scaler"].cur_scale,
        "scaler": {k: getattr(opt["loss_scaler"], k)
                   for k in ("cur_scale", "cur_iter", "last_overflow_iter", "cur_hysteresis")},
        "c_attn": next(v.float().flatten()[:8].tolist() for k, v in model.items() if k.endswith("attn.c_attn.weight")),
        "wte": model["transformer.wte.weight"].float().flatten()[:8].tolist(),
    })
print(json.dumps(out))
"""
    path = os.pathsep.join([str(code), *stand_in_paths(JOB_MODULES, sys.executable)[0]])
    files = [str(run / "checkpoints" / f"{CHECKPOINT}_{p}_{t}") for p in range(pp) for t in range(tp)]
    done = subprocess.run([sys.executable, "-c", reader, *files], env=_env(run, PYTHONPATH=path),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def _losses(lines: list[str], pattern: re.Pattern) -> list[float]:
    return [float(m.group(2)) for line in lines if (m := pattern.search(line))]


# name: (tensor, pipeline) parallel degree
LAYOUTS = {"degree1": (1, 1), "tp2": (2, 1), "pp2": (1, 2), "pp2_tp2": (2, 2)}
PIPELINED = {"pp2": 2e-4, "pp2_tp2": 5e-4}  # each with its losses' tolerance against degree 1 (module docstring)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    return {name: _launch(tmp_path_factory.mktemp(f"gpt2_2022_{name}"), tp, pp) for name, (tp, pp) in LAYOUTS.items()}


def test_the_vendored_files_are_upstreams_text_and_each_change_is_recorded():
    assert changed_files("gpt2_2022") == []
    assert all(change["why"] for change in record("gpt2_2022")["mechanical_changes"])


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_the_scripts_dynamic_loss_scaling_skips_overflowing_steps_then_trains(runs):
    losses = _losses(runs["degree1"]["lines"], LOSS)
    assert len(losses) == STEPS
    # steps 0-15 overflow fp16 at the falling scale and are skipped: the second pass over the 8 batches
    # repeats the first's losses bit for bit
    assert losses[8:16] == losses[0:8]
    # then the masters are updated: the third pass differs
    assert max(abs(a - b) for a, b in zip(losses[16:24], losses[0:8])) > 0.05
    assert [s["loss_scale"] for s in runs["degree1"]["saved"]] == [2.0 ** 17]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_tp2_equals_degree1_within_fp16_rounding(runs):
    for pattern in (LOSS, VALIDATION):
        degree1, tp2 = _losses(runs["degree1"]["lines"], pattern), _losses(runs["tp2"]["lines"], pattern)
        assert len(tp2) == len(degree1) > 0
        assert tp2 == pytest.approx(degree1, abs=5e-4)
    assert [s["loss_scale"] for s in runs["tp2"]["saved"]] == [2.0 ** 17] * 2


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_each_tp_rank_saves_its_fp16_shard_and_the_scripts_fp32_masters_of_it(runs):
    degree1, ranks = runs["degree1"]["saved"][0], runs["tp2"]["saved"]
    assert tuple(degree1["model"]["transformer.h.0.attn.c_attn.weight"][0]) == FULL_SHAPES["attn.c_attn.weight"]
    for saved in ranks:
        for suffix, shard in TP2_SHARDS.items():
            name = suffix if suffix.startswith("transformer.") else f"transformer.h.1.{suffix}"
            assert saved["model"][name] == [list(shard), "torch.float16"], name
        assert {dtype for _, dtype in saved["masters"]} == {"torch.float32"}
        assert [96, 64] not in [shape for shape, _ in saved["masters"]]  # the vocabulary is sharded, not whole
        assert [48, 64] in [shape for shape, _ in saved["masters"]]
        assert saved["masters_round_to_model"]  # the masters are the shards the model holds
    assert ranks[0]["c_attn"] != ranks[1]["c_attn"]  # two halves, not replicas
    total = [sum(_numel(s) for s, _ in saved["masters"]) for saved in (degree1, *ranks)]
    assert total[1] == total[2] < total[0]


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", PIPELINED)
def test_pipelined_runs_keep_degree1s_loss_scale_trajectory_and_losses(runs, name):
    degree1, pipelined = runs["degree1"], runs[name]
    # every rank's scaler took degree 1's path: 16 overflows (the last at step 16), 2**17 since
    assert [s["scaler"] for s in pipelined["saved"]] == [degree1["saved"][0]["scaler"]] * len(pipelined["saved"])
    assert degree1["saved"][0]["scaler"]["last_overflow_iter"] == 16
    losses = _losses(pipelined["lines"], LOSS)
    assert losses[8:16] == losses[0:8]  # the same steps skipped
    for pattern in (LOSS, VALIDATION):
        expected, got = _losses(degree1["lines"], pattern), _losses(pipelined["lines"], pattern)
        assert len(got) == len(expected) > 0
        assert got == pytest.approx(expected, abs=PIPELINED[name])


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("name", PIPELINED)
def test_each_pipeline_stage_saves_its_own_layers_and_the_scripts_masters_of_them(runs, name):
    degree1, saved = runs["degree1"]["saved"][0], runs[name]["saved"]
    tp = LAYOUTS[name][0]
    stages = [saved[:tp], saved[tp:]]  # the files are pp_rank-major
    layer = re.compile(r"transformer\.h\.(\d+)\.")
    around = [{"transformer.wte.weight", "transformer.wpe.weight"},  # the embeddings, then the final norm and the
              {"transformer.wte.weight", "lm_head.weight", "transformer.ln_f.weight", "transformer.ln_f.bias"}]
    for stage, ranks in enumerate(stages):  # lm_head, a copy of wte (tied: one parameter under two names)
        for rank in ranks:
            assert {m.group(1) for n in rank["model"] if (m := layer.match(n))} == {str(stage)}
            assert {n for n in rank["model"] if not layer.match(n)} == around[stage]
            assert {dtype for _, dtype in rank["model"].values()} == {"torch.float16"}
            assert {dtype for _, dtype in rank["masters"]} == {"torch.float32"}
            assert rank["masters_round_to_model"]  # the masters are this rank's parameters
            assert rank["model"][f"transformer.h.{stage}.attn.c_attn.weight"][0] == \
                list(TP2_SHARDS["attn.c_attn.weight"] if tp == 2 else FULL_SHAPES["attn.c_attn.weight"])
        if tp == 2:
            assert ranks[0]["c_attn"] != ranks[1]["c_attn"]  # two halves, not replicas
    assert set().union(*(rank["model"] for rank in saved)) == set(degree1["model"])
    for rank in range(tp):
        assert stages[0][rank]["wte"] == stages[1][rank]["wte"]  # the tied copy is one value
    if tp == 1:  # the masters cover the model once, but for the tied embedding each of its holders updates
        total = [sum(_numel(s) for s, _ in stage["masters"]) for stage in (degree1, *saved)]
        assert total[1] + total[2] == total[0] + _numel(degree1["model"]["transformer.wte.weight"][0])


def _numel(shape: list[int]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
