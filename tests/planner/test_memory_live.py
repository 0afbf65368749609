"""The planner's per-rank memory against a live run of sagelaunch's own SMP (scripts/planner_measure.py: torchrun,
gloo, torch's MemTracker over the third step): parameters, gradients, masters and optimizer state within ±2 %,
activations and the peak within ±10 %, on three layouts of the three families (tp with checkpointing, pp with interleaved
microbatches, optimizer sharding with bf16)."""

from __future__ import annotations

import pytest

from scripts import planner_measure as pm
from scripts.bench_planner_memory import LIMITS, pairs, predicted

CASES = ("gpt2_w2_tp2_pp1_ckpt_mb4_bf16", "llama_w2_tp1_pp2_mb4_fp32", "bert_w2_tp1_pp1_sop_ckpt_mb4_bf16")


@pytest.mark.slow
def test_predictions_match_a_live_run(tmp_path):
    wanted = [c for c in pm.cases() if c["name"] in CASES]
    run = pm.measure(wanted, tmp_path, timeout=600)
    assert len(run.records) == 6
    misses = []
    for record in run.records:
        data = record.model_dump()
        for key, (p, m) in pairs(data, predicted(data)).items():
            if m and abs(p / m - 1) > LIMITS[key]:
                misses.append(f"{record.config.name} rank {record.rank} {key}: {p} predicted, {m} measured")
    assert not misses, misses
