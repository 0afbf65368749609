"""The planner's per-rank memory beside what sagelaunch's modelparallel measurably held: reads the harness's
records (scripts/planner_measure.py: torch's MemTracker over live tensor storages on each rank, third training
step, CPU) and prints predicted/measured per configuration and rank.

    python scripts/bench_planner_memory.py MEASURED.json [--markdown]

The checks (issue #33): parameters, gradients, optimizer state within ±2 %; activations and peak within ±10 %.
DDP's gradient buckets are sized apart (ddp_bucket_bytes); registered buffers (position ids: a few KiB) are not
compared.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

from sagelaunch.planner.layout import Layout, check_layout
from sagelaunch.planner.memory import MemoryBreakdown, stage_memory
from sagelaunch.planner.models import model_from_config
from sagelaunch.planner.shape import ModelShape

LIMITS = {"parameters": 0.02, "gradients": 0.02, "optimizer": 0.02, "masters": 0.02, "ddp buckets": 0.02,
          "activations": 0.10, "peak": 0.10}


def predicted_shape(record: dict[str, Any]) -> ModelShape:
    config = record["config"]
    model = dict(config["transformers_config"])
    model["architectures"] = [config["model_class"]]
    return model_from_config(model, seq_len=config["seq_len"])


def predicted(record: dict[str, Any]) -> MemoryBreakdown:
    config = record["config"]
    shape = predicted_shape(record)
    smp = config["smp_config"]
    layout = Layout(tp=config["tp"], pp=config["pp"], sdp=config["sharded_data_parallel_degree"],
                    shard_optimizer_state=config["shard_optimizer_state"],
                    activation_checkpointing=config["activation_checkpointing"], microbatches=config["microbatches"],
                    precision=config["precision"], pipeline=smp.get("pipeline", "interleaved"),
                    active_microbatches=smp.get("active_microbatches"))
    world = check_layout(layout, config["world_size"], 0)
    micro = config["batch_per_rank"] // config["microbatches"]
    stages = stage_memory(shape, layout, world, micro, config["seq_len"], 0, runtime="sagelaunch", device="cpu",
                          replica_rank=record["rdp_rank"])
    return stages[record["pp_rank"]]


def tracker_activations(m: MemoryBreakdown) -> int:
    """What the tracker files as activations: every tensor made in forward (outside backward and the optimizer's
    step), so besides the forward's tensors sharded data parallelism's root parameters, gathered at the forward's
    start and kept (its blocks are gathered and freed one by one before the forward ends, with the loss, at its
    height). DDP's gradient buckets are measured apart (ddp_bucket_bytes)."""
    return m.activations + m.gathered_root


def pairs(record: dict[str, Any], m: MemoryBreakdown) -> dict[str, tuple[int, int]]:
    masters_measured = record["master_parameter_bytes"] + record["master_gradient_bytes"]
    sdp = record["config"]["sharded_data_parallel_degree"]
    buckets = record.get("ddp_bucket_bytes", 0)
    # the tracker counts a bucket from the reducer's first copy into it: a peak inside backward already holds it
    unseen_buckets = buckets - record.get("ddp_bucket_bytes_in_peak", 0)
    return {"parameters": (m.parameters, record["parameter_bytes"]), "gradients": (m.gradients, record["gradient_bytes"]),
            "optimizer": (m.optimizer_state, record["optimizer_state_bytes"]),
            "masters": (m.master_weights + m.master_gradients, masters_measured),
            "ddp buckets": (m.communication if sdp == 1 else 0, buckets),
            "activations": (tracker_activations(m), record["activation_peak_bytes"]),
            "peak": (m.total, record["peak_bytes"] + unseen_buckets)}


def llm_analysis_input(record: dict[str, Any]) -> dict[str, Any]:
    """One configuration as scripts/llm_analysis_memory.py reads it (llm-analysis's own terms)."""
    c = record["config"]
    shape = predicted_shape(record)
    sdp = c["sharded_data_parallel_degree"]
    return {"name": c["name"], "layers": shape.layers, "heads": shape.heads, "kv_heads": shape.kv_heads,
            "hidden": shape.hidden, "ffn": shape.ffn, "vocab": shape.vocab, "seq": c["seq_len"],
            "gated": shape.family == "llama", "tp": c["tp"], "pp": c["pp"], "dp": c["rdp"],
            "sop": c["shard_optimizer_state"], "sdp": sdp, "sdp_replicas": c["rdp"] // sdp if sdp > 1 else 1,
            "ckpt": c["activation_checkpointing"], "microbatches": c["microbatches"],
            "micro_batch": c["batch_per_rank"] // c["microbatches"], "precision": c["precision"]}


def llm_analysis(records: list[dict[str, Any]], python: Path) -> dict[str, dict[str, Any]]:
    """llm-analysis's figures per configuration, from its own venv's interpreter."""
    configs = {r["config"]["name"]: llm_analysis_input(r) for r in records}
    done = subprocess.run([str(python), str(Path(__file__).with_name("llm_analysis_memory.py"))],
                          input=json.dumps(list(configs.values())), capture_output=True, text=True, check=True)
    return {f["name"]: f for f in json.loads(done.stdout)}


def ratio(p: int, m: int) -> float:
    return p / m if m else (1.0 if p == 0 else float("inf"))


def side_by_side(records: list[dict[str, Any]], other: dict[str, dict[str, Any]]) -> None:
    """Per configuration, its most loaded rank: measured peak (+ DDP buckets it does not already hold), the planner's total and
    llm-analysis's (weight+op_state+grad+act) per GPU, in MiB, with each prediction's ratio to the measurement."""
    worst: dict[str, tuple[int, int]] = {}
    for record in records:
        p, m = pairs(record, predicted(record))["peak"]
        name = record["config"]["name"]
        if m > worst.get(name, (0, 0))[1]:
            worst[name] = (p, m)
    print("\n| configuration | measured peak MiB | planner MiB (ratio) | llm-analysis MiB (ratio) |")
    print("| --- | --- | --- | --- |")
    inside = {"planner": 0, "llm-analysis": 0}
    expressed = 0
    for name, (p, m) in worst.items():
        la = other[name]
        inside["planner"] += abs(p / m - 1) <= LIMITS["peak"]
        if "why" in la:
            cell = f"not expressible: {la['why']}"
        else:
            expressed += 1
            inside["llm-analysis"] += abs(la["total"] / m - 1) <= LIMITS["peak"]
            cell = f"{la['total'] / 2**20:.2f} ({la['total'] / m:.3f})"
        print(f"| {name} | {m / 2**20:.2f} | {p / 2**20:.2f} ({p / m:.3f}) | {cell} |")
    print(f"\nwithin ±{LIMITS['peak']:.0%} of the measured peak: planner {inside['planner']}/{len(worst)}, "
          f"llm-analysis {inside['llm-analysis']}/{expressed} it can express")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("measured", type=Path)
    parser.add_argument("--markdown", action="store_true", help="print README's table")
    parser.add_argument("--llm-analysis", type=Path, metavar="PYTHON",
                        help="a Python with llm-analysis installed (.venv-llm-analysis/bin/python): its per-GPU "
                             "total beside the planner's and the measured peak, per configuration")
    args = parser.parse_args()
    records = json.loads(args.measured.read_text())["records"]
    worst: dict[str, float] = {k: 0.0 for k in LIMITS}
    within = {k: 0 for k in LIMITS}
    rows: dict[str, dict[str, float]] = {}  # --markdown: per configuration, the rank's ratio furthest from 1
    for record in records:
        got = pairs(record, predicted(record))
        cells = []
        name = record["config"]["name"]
        row = rows.setdefault(name, {})
        for key, (p, m) in got.items():
            r = ratio(p, m)
            worst[key] = max(worst[key], abs(r - 1))
            within[key] += abs(r - 1) <= LIMITS[key]
            if abs(r - 1) >= abs(row.get(key, 1.0) - 1):
                row[key] = r
            cells.append(f"{key} {p / 2**20:.2f}/{m / 2**20:.2f} MiB ({r:.3f})")
        if not args.markdown:
            print(f"{name} rank {record['rank']}: " + ", ".join(cells))
    if args.markdown:
        print("| configuration | " + " | ".join(LIMITS) + " |")
        print("| --- |" + " --- |" * len(LIMITS))
        for name, row in rows.items():
            print(f"| {name} | " + " | ".join(f"{row[k]:.3f}" for k in LIMITS) + " |")
    if args.llm_analysis:
        side_by_side(records, llm_analysis(records, args.llm_analysis))
    n = len(records)
    print(f"\n{n} ranks of {len({r['config']['name'] for r in records})} configurations; predicted/measured within "
          "the limit: " + ", ".join(f"{k} {within[k]}/{n} (±{LIMITS[k]:.0%}, worst {worst[k]:.1%})" for k in LIMITS))


if __name__ == "__main__":
    main()
