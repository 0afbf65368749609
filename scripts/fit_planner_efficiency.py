"""Fit the planner's efficiency constant of the A100 on one published run (Megatron-LM Table 1, the 145.6B row)
and write planner/efficiency.json; print the other rows' predictions beside their published figures.

    python scripts/fit_planner_efficiency.py [--check]   (--check: print only, write nothing)
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from sagelaunch.planner.hardware import hardware
from sagelaunch.planner.published import PublishedRun, fit_efficiency, predicted_tflops

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "tests" / "data" / "planner" / "megatron_table1.json"
FITTED_ROW = 6  # 145.6B: tp 8 × pp 8 on 1536 GPUs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    data = json.loads(TABLE.read_text())
    hw = hardware("ml.p4de.24xlarge").model_copy(update={"inter_node_bandwidth": data["inter_node_bandwidth_bytes_per_s"]})
    runs = [PublishedRun(vocab=data["vocab"], seq_len=data["seq_len"],
                         **{k: v for k, v in r.items() if k != "params_b"}) for r in data["rows"]]
    eff = fit_efficiency(runs[FITTED_ROW], hw)
    print(f"A100 efficiency {eff:.4f} (fitted on the {data['rows'][FITTED_ROW]['params_b']}B row)")
    print(f"{'params':>8} {'tp':>3} {'pp':>3} {'GPUs':>5} {'published':>10} {'predicted':>10} {'error':>7}")
    for row, run in zip(data["rows"], runs):
        pred = predicted_tflops(run, hw, eff)
        print(f"{row['params_b']:>7}B {run.tp:>3} {run.pp:>3} {run.gpus:>5} {run.tflops_per_gpu:>10.0f} "
              f"{pred:>10.1f} {pred / run.tflops_per_gpu - 1:>+7.1%}")
    if not args.check:
        out = ROOT / "planner" / "efficiency.json"
        doc = json.loads(out.read_text())
        doc["accelerators"]["A100"] = {"value": round(eff, 4), "fitted_on": (
            f"Megatron-LM Table 1 (arXiv 2104.04473), the {data['rows'][FITTED_ROW]['params_b']}B row: "
            f"{runs[FITTED_ROW].tflops_per_gpu:.0f} TFLOP/s per A100")}
        out.write_text(json.dumps(doc, indent=2) + "\n")


if __name__ == "__main__":
    main()
