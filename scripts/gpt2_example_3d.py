"""The vendored SMP v1 GPT-2 example at tp=2 × pp=2 × dp=2 (8 ranks), beside the same script at degree 1.

Too heavy for the test suite on a 2-core machine (tests/modelparallel/test_gpt2_example.py runs the 4-rank
combinations); run it by hand: `.venv/bin/python scripts/gpt2_example_3d.py`. Prints both runs' validation losses,
their largest difference (1e-5 is the suite's tolerance) and the shapes each saving rank's partial checkpoint holds.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.modelparallel.gpt2_example import run_example, saved_partial_model, validation_losses  # noqa: E402

BASE = {"ddp": True, "tensor_parallel_degree": 1, "partitions": 1, "auto_partition": False, "default_partition": 0}
THREE_D = {**BASE, "tensor_parallel_degree": 2, "partitions": 2, "microbatches": 2}


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="gpt2_3d_"))
    os.environ["SAGELAUNCH_HOME"] = str(root / "home")
    losses = {}
    for name, ranks, params, hp in (
        ("degree1", 1, BASE, {"train_batch_size": 8, "val_batch_size": 8}),
        # smp.dp_size() is world / pp = 4 (tp ranks included): each rank reads a quarter of degree 1's batch of 8,
        # split into 2 microbatches
        ("tp2_pp2_dp2", 8, THREE_D, {"tensor_parallel_degree": 2, "pipeline_parallel_degree": 2, "microbatches": 2,
                                     "train_batch_size": 2, "val_batch_size": 2, "checkpoint_freq": 4}),
    ):
        hp = {**hp, "checkpoint-dir": str(root / f"{name}_checkpoints")}
        record, lines = run_example(root, ranks, params, hp, name=name)
        print(name, record["TrainingJobStatus"], record.get("FailureReason") or "")
        losses[name] = validation_losses(lines)
    for a, b in zip(losses["degree1"], losses["tp2_pp2_dp2"]):
        print(f"degree 1 {a:.7f}   tp2×pp2×dp2 {b:.7f}   |Δ| {abs(a - b):.1e}")
    for file, state in saved_partial_model(root / "tp2_pp2_dp2_checkpoints").items():
        shapes = {k: tuple(v.shape) for k, v in state.items() if k.endswith(("c_attn.weight", "c_fc.weight"))}
        print(file, shapes)


if __name__ == "__main__":
    main()
