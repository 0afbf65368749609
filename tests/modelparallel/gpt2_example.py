"""Run the vendored SMP v1 GPT-2 example (tests/data/smp_examples/gpt2, unchanged) in a local job: tiny synthetic
data in the example's own input format (openwebtext JSON lines of input_ids/attention_mask), the notebook's
hyperparameters scaled down to a 2-layer, 64-wide GPT-2."""

from __future__ import annotations

import concurrent.futures
import json
import random
import re
import shutil
import threading
from pathlib import Path
from typing import Callable

from sagelaunch.estimators import PyTorch

EXAMPLE = Path(__file__).resolve().parents[1] / "data" / "smp_examples" / "gpt2"
CONTEXT, VOCAB = 16, 96
# JobPool's two threads prepare the same folders: one prepares them, the other finds them whole
_PREPARING = threading.Lock()

# the notebook's hyperparameters (smp-train-gpt-simple.ipynb), scaled down; dropout 0 so that layouts compare
NOTEBOOK_HYPERPARAMETERS = {
    "max_steps": 4, "seed": 12345, "fp16": 0, "lr": 2.0e-3, "lr_decay_iters": 8, "min_lr": 0.00001,
    "lr-decay-style": "linear", "warmup": 0.01, "num_kept_checkpoints": 5, "checkpoint_freq": 200,
    "logging_freq": 1, "save_final_full_model": 0, "manual_partition": 1, "skip_full_optimizer": 1,
    "shard_optimizer_state": 0, "activation_checkpointing": 1, "activation_strategy": "each", "optimize": "speed",
    "zipped_data": 0, "validation_freq": 1, "validation_batches": 2, "use_wiki_data": 0,
    "max_context_width": CONTEXT, "hidden_width": 64, "num_layers": 2, "num_heads": 2, "vocab_size": VOCAB,
    "tensor_parallel_degree": 1, "pipeline_parallel_degree": 1, "train_batch_size": 4, "val_batch_size": 4,
    "prescaled_batch": 0, "use_distributed_transformer": 0,
    "resid_pdrop": 0.0, "embd_pdrop": 0.0, "attn_pdrop": 0.0, "summary_first_pdrop": 0.0,
}


def write_data(root: Path, rows: int = 32) -> dict[str, str]:
    """train/ and test/ channels: JSON lines with input_ids and attention_mask, as data_pipeline.py reads them."""
    rng = random.Random(0)
    channels = {}
    with _PREPARING:
        for name in ("train", "test"):
            folder = root / name
            folder.mkdir(parents=True, exist_ok=True)
            lines = [json.dumps({"input_ids": [rng.randrange(VOCAB) for _ in range(CONTEXT)],
                                 "attention_mask": [1] * CONTEXT}) + "\n" for _ in range(rows)]
            path = folder / f"{name}_000.json"
            if not path.exists():  # the same rows every time: a job already reading them keeps its file
                path.write_text("".join(lines))
            channels[name] = f"file://{folder}"
    return channels


def example_code(tmp_path: Path) -> Path:
    """The vendored example, less its requirements.txt: local jobs install that file as SageMaker's toolkit does, and
    it pins transformers==4.21.0 and names sagemaker, smdebug, … — downloads this offline machine cannot make (the
    job's Python already has transformers). The scripts themselves are copied unchanged."""
    code = tmp_path / "example_code"
    with _PREPARING:
        if not code.is_dir():
            shutil.copytree(EXAMPLE, code, ignore=shutil.ignore_patterns("requirements.txt", "*.ipynb"))
    return code


def run_example(tmp_path: Path, processes: int, parameters: dict, hyperparameters: dict | None = None,
                mpi_options: str = "", data: dict[str, str] | None = None, name: str = "run"):
    """Launch train_gpt_simple.py; return (the job's describe() record, its log lines)."""
    hp = {**NOTEBOOK_HYPERPARAMETERS, **(hyperparameters or {})}
    hp.setdefault("checkpoint-dir", str(tmp_path / "checkpoints"))
    estimator = PyTorch(
        entry_point="train_gpt_simple.py", source_dir=str(example_code(tmp_path)), framework_version="2.0.0", py_version="py310",
        base_job_name="gpt2-" + name.replace("_", "-"),  # jobs started in the same millisecond get different names
        instance_type="local", output_path=str(tmp_path / name), hyperparameters=hp,
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": parameters}},
                      "mpi": {"enabled": True, "processes_per_host": processes, "custom_mpi_options": mpi_options}},
    )
    job = estimator.fit(data or write_data(tmp_path / "data"), wait=True, logs=False)
    return job.describe(), list(job.logs())


class JobPool:
    """A test module's local jobs of the example, two at a time in threads, started when the module's fixture is set up
    and read by name (each job is mostly its processes starting: two jobs share the 2 cores well, and the tests check
    one job while the next ones run). `prepare(name)` runs in the job's thread just before it starts (a resumed job
    copies another job's checkpoint there, waiting for that job with `result`)."""

    def __init__(self, launch: Callable[[str], tuple[dict, list[str]]], names: list[str],
                 prepare: Callable[[str], None] = lambda name: None):
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=2)
        self.futures: dict[str, concurrent.futures.Future] = {}
        for name in names:  # in this order (a job waited for by a later one's `prepare` is started before it)
            self.futures[name] = self.pool.submit(lambda n=name: (prepare(n), launch(n))[1])

    def result(self, name: str) -> tuple[dict, list[str]]:
        return self.futures[name].result()

    def close(self) -> None:
        for future in self.futures.values():
            future.cancel()  # the jobs not started yet (only some tests selected, a failure)
        self.pool.shutdown(wait=True)


VALIDATION = re.compile(r"Batch (\d+) Validation loss: ([-+0-9.eE]+)")


def validation_losses(lines: list[str]) -> list[float]:
    """The example's `Batch N Validation loss: X` lines (rank 0, after the all-reduce over the dp group)."""
    return [float(m.group(2)) for line in lines if (m := VALIDATION.search(line))]


# The example's GPT-2 at NOTEBOOK_HYPERPARAMETERS' size: each parameter's full shape, by name in block 0 / 1
FULL_SHAPES = {
    "transformer.wte.weight": (VOCAB, 64), "transformer.wpe.weight": (CONTEXT, 64),
    "attn.c_attn.weight": (64, 192), "attn.c_attn.bias": (192,), "attn.c_proj.weight": (64, 64),
    "mlp.c_fc.weight": (64, 256), "mlp.c_fc.bias": (256,), "mlp.c_proj.weight": (256, 64),
}
# tensor parallelism (tp=2): the vocabulary-parallel embedding, q|k|v and c_fc by columns, the c_proj by rows
TP2_SHARDS = {
    "transformer.wte.weight": (VOCAB // 2, 64), "attn.c_attn.weight": (64, 96), "attn.c_attn.bias": (96,),
    "attn.c_proj.weight": (32, 64), "mlp.c_fc.weight": (64, 128), "mlp.c_fc.bias": (128,),
    "mlp.c_proj.weight": (128, 64),
}


def saved_partial_model(checkpoints: Path, tag: str = "total_steps4") -> dict[str, dict]:
    """What the script saved with smp.save_checkpoint(partial=True): {file name: its state dict}, one file per
    (pp_rank, tp_rank[, rdp_rank]) that saved."""
    import torch

    folder = checkpoints / f"{tag}_partial"
    return {p.name: torch.load(p, weights_only=False, map_location="cpu")
            for p in sorted(folder.glob("model_*.pt"))}


def shape_of(state: dict, name: str) -> tuple[int, ...]:
    return tuple(state[name].shape)
