"""The cases each torchrun launch runs (one launch per world size)."""

from __future__ import annotations

from sagelaunch.jobspec.smp import PLACEMENT_PERMUTATIONS as PERMUTATIONS

PLACEMENTS = ["cluster", "spread", *PERMUTATIONS]


def _train(name, model, config, local_batch=4, **extra):
    return {"name": name, "kind": "train", "model": model, "config": config, "local_batch": local_batch, **extra}


def _pp(schedule, mb):
    return {"pipeline_parallel_degree": 2, "pipeline": schedule, "microbatches": mb}


TP2 = {"tensor_parallel_degree": 2, "ddp": True}
DP = {"ddp": True}

WORLD2 = [
    _train("mlp_tp2", "mlp", TP2, tensor_parallel=True),
    _train("roberta_tp2", "roberta", TP2, tensor_parallel=True, optimizer="adam", roundtrip=True),
    _train("mlp_pp2_simple_mb2", "mlp", _pp("simple", 2)),
    _train("mlp_pp2_simple_mb4", "mlp", _pp("simple", 4)),
    _train("mlp_pp2_interleaved_mb2", "mlp", _pp("interleaved", 2)),
    _train("mlp_pp2_interleaved_mb4", "mlp", _pp("interleaved", 4)),
    _train("mlp_pp2_manual_partition", "mlp", {**_pp("simple", 2), "auto_partition": False, "default_partition": 0},
           manual_partition=[0, 0, 0, 0, 0, 1, 1]),
    _train("roberta_pp2_simple_mb2", "roberta", _pp("simple", 2)),
    _train("roberta_pp2_interleaved_mb4", "roberta", _pp("interleaved", 4)),
    _train("mlp_dp2_mb2", "mlp", {**DP, "microbatches": 2}),
    _train("roberta_dp2_mb2", "roberta", {**DP, "microbatches": 2}),
    _train("mlp_dp2_shard_optimizer_state", "mlp", {**DP, "shard_optimizer_state": True}, optimizer="adam",
           roundtrip=True),
    _train("mlp_dp2_adam", "mlp", DP, optimizer="adam"),  # the unsharded twin, for the state-size comparison
    _train("roberta_dp2_shard_optimizer_state", "roberta", {**DP, "shard_optimizer_state": True}, optimizer="adam"),
    _train("mlp_dp2_checkpoint_each", "mlp", DP, checkpointing="each", baseline="mlp_dp2_adam"),
    _train("roberta_dp2_offload_horizon2", "roberta",
           {**DP, "offload_activations": True, "activation_loading_horizon": 2, "microbatches": 2},
           baseline="roberta_dp2_mb2"),
    _train("mlp_dp2_checkpoint_group2", "mlp", DP, checkpointing="group_2", baseline="mlp_dp2_adam"),
    _train("mlp_dp2_checkpoint_contiguous_offload", "mlp", {**DP, "offload_activations": True, "microbatches": 2},
           checkpointing="contiguous", baseline="mlp_dp2_mb2", checkpoint_baseline="mlp_dp2_checkpoint_contiguous"),
    _train("roberta_tp2_checkpoint_offload", "roberta", {**TP2, "offload_activations": True},
           tensor_parallel=True, checkpointing="each", baseline="roberta_tp2",
           checkpoint_baseline="roberta_tp2_checkpoint"),
    _train("roberta_pp2_checkpoint_offload", "roberta", {**_pp("simple", 2), "offload_activations": True},
           checkpointing="each", baseline="roberta_pp2_simple_mb2", checkpoint_baseline="roberta_pp2_checkpoint"),
    # the checkpointing-only twins of the three above: what offloading the checkpointed inputs is measured against
    _train("mlp_dp2_checkpoint_contiguous", "mlp", {**DP, "microbatches": 2}, checkpointing="contiguous"),
    _train("roberta_tp2_checkpoint", "roberta", TP2, tensor_parallel=True, checkpointing="each"),
    _train("roberta_pp2_checkpoint", "roberta", _pp("simple", 2), checkpointing="each"),
    {"name": "resume_pp2", "kind": "resume", "model": "mlp", "config": _pp("interleaved", 2), "local_batch": 4,
     "optimizer": "adam"},
    {"name": "resume_tp2", "kind": "resume", "model": "roberta", "config": TP2, "local_batch": 4,
     "optimizer": "adam", "tensor_parallel": True},
    # parameters without effect here: accepted with one warning on rank 0
    {"name": "comm", "kind": "comm", "config": {**DP, "optimize": "speed", "active_microbatches": 3}},
    {"name": "bad_tp_larger_than_world", "kind": "bad_config", "config": {"tensor_parallel_degree": 4, "ddp": True}},
    # parameters the implementation cannot honour: refused at smp.init, never silently ignored
    {"name": "bad_only_forward_pipeline", "kind": "bad_config", "config": {"pipeline": "_only_forward", "ddp": True}},
    {"name": "bad_delayed_parameter_initialization", "kind": "bad_config",
     "config": {"delayed_parameter_initialization": True, "pipeline_parallel_degree": 2}},
    {"name": "bad_horovod", "kind": "bad_config", "config": {"horovod": True}},
    {"name": "bad_batch_not_divisible", "kind": "bad_batch", "model": "mlp", "local_batch": 6,
     "config": _pp("simple", 4)},
    # sharded data parallelism replaces the parameters while wrapping (a pipelined model keeps them until the first
    # step partitions it, and the optimizer then keeps the rank's own)
    {"name": "optimizer_before_wrap", "kind": "optimizer_before_wrap", "model": "mlp",
     "config": {"sharded_data_parallel_degree": 2, "ddp": True}},
]

WORLD4 = [
    _train("mlp_tp2_dp2", "mlp", TP2, tensor_parallel="context"),
    _train("roberta_tp2_dp2", "roberta", {**TP2, "microbatches": 2}, tensor_parallel=True),
    _train("mlp_pp2_dp2_shard_optimizer_state", "mlp", {**_pp("interleaved", 2), "ddp": True,
                                                       "shard_optimizer_state": True}, optimizer="adam", roundtrip=True),
    _train("roberta_pp2_dp2", "roberta", {**_pp("simple", 2), "ddp": True}),
    _train("mlp_pp2_tp2", "mlp", {**_pp("simple", 2), **TP2}, tensor_parallel=True, optimizer="adam", roundtrip=True),
    _train("mlp_tp2_dp2_shard_optimizer_state", "mlp", {**TP2, "shard_optimizer_state": True}, tensor_parallel=True,
           optimizer="adam", roundtrip=True),
    _train("roberta_tp2_dp2_shard_prescaled", "roberta", {**TP2, "shard_optimizer_state": True, "prescaled_batch": True},
           tensor_parallel=True, optimizer="adam", roundtrip=True),
    _train("roberta_pp2_tp2", "roberta", {**_pp("interleaved", 2), **TP2}, tensor_parallel=True),
    {"name": "layouts", "kind": "layout", "config": {"pipeline_parallel_degree": 2, "tensor_parallel_degree": 2,
                                                     "ddp": True}, "placements": PLACEMENTS},
    {"name": "bad_pp_tp_not_dividing", "kind": "bad_config", "config": {"pipeline_parallel_degree": 3}},
]
