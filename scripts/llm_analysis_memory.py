"""llm-analysis's per-GPU training memory for the planner benchmark's configurations, run inside its own venv
(`.venv-llm-analysis`: llm-analysis pins its own dependencies) by scripts/bench_planner_memory.py --llm-analysis.

    .venv-llm-analysis/bin/python scripts/llm_analysis_memory.py < configurations.json > figures.json

Input: a JSON list of {name, layers, heads, kv_heads, hidden, ffn, vocab, seq, gated, tp, pp, dp, sop, sdp,
sdp_replicas, ckpt, microbatches, micro_batch, precision}. Output: one entry per configuration, either
{"name", "total", "activations", "weights", "gradients", "optimizer"} (bytes per GPU) or {"name", "why"} where
llm-analysis cannot express the layout. Only llm-analysis is imported here (not sagelaunch: another venv).
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any


def why_not(c: dict[str, Any]) -> str | None:
    """Layouts llm-analysis has no setting for."""
    if c["precision"] == "fp32":
        return "fp32 training: llm-analysis takes 4-, 8- or 16-bit weights and activations only"
    if c["sdp"] > 1 and c["sdp_replicas"] > 1:
        return (f"hybrid sharding (sharded over {c['sdp']} of {c['sdp'] * c['sdp_replicas']} data-parallel ranks): "
                "its ZeRO-3 shards over the whole data-parallel group")
    if c["sdp"] > 1 and c["tp"] > 1:
        return "sharded data parallelism with tensor parallelism: no setting"
    return None


def figures(c: dict[str, Any]) -> dict[str, Any]:
    from llm_analysis.analysis import ActivationRecomputation, DSZeRO, LLMAnalysis
    from llm_analysis.config import DtypeConfig, ModelConfig, ParallelismConfig, get_gpu_config_by_name

    reason = why_not(c)
    if reason:
        return {"name": c["name"], "why": reason}
    bits = 16
    model = ModelConfig(name=c["name"], num_layers=c["layers"], n_head=c["heads"], hidden_dim=c["hidden"],
                        vocab_size=c["vocab"], max_seq_len=c["seq"], num_key_value_heads=c["kv_heads"],
                        ffn_embed_dim=c["ffn"])
    analysis = LLMAnalysis(model, get_gpu_config_by_name("a100-sxm-80gb"),
                           DtypeConfig(name="w16a16e16", weight_bits=bits, activation_bits=bits, embedding_bits=bits),
                           ParallelismConfig(tp_size=c["tp"], pp_size=c["pp"], dp_size=c["dp"]))
    zero = DSZeRO.STAGE_3 if c["sdp"] > 1 else DSZeRO.STAGE_1 if c["sop"] else DSZeRO.NONE
    out = analysis.training(batch_size_per_gpu=c["micro_batch"], gradient_accumulation_steps=c["microbatches"],
                            seq_len=c["seq"], activation_recomputation=ActivationRecomputation.FULL if c["ckpt"]
                            else ActivationRecomputation.NONE, ds_zero=zero, flash_attn=False, softmax_dropout=True,
                            mlp_gated_linear_units=c["gated"], layernorm_dtype_bytes=bits // 8, master_weights_dtype_bytes=4)
    return {"name": c["name"], "total": out["(weight+op_state+grad+act)_memory_per_gpu"],
            "activations": out["activation_memory_per_gpu"], "weights": out["weight_memory_per_gpu"],
            "gradients": out["gradient_memory_per_gpu"], "optimizer": out["optimizer_state_memory_per_gpu"]}


def figures_or_why(c: dict[str, Any]) -> dict[str, Any]:
    try:
        return figures(c)
    except AssertionError as e:  # llm-analysis checks its inputs with asserts: its own words say why
        return {"name": c["name"], "why": f"llm-analysis refuses it: {e}"}


def main() -> None:
    logging.disable(logging.WARNING)  # llm-analysis logs every figure at INFO/WARNING
    json.dump([figures_or_why(c) for c in json.load(sys.stdin)], sys.stdout)


if __name__ == "__main__":
    main()
