"""Every key SMP v1's smp.init and SDK v2's validate_mp_config accept: meaning, one warning, or a refusal by name."""

from __future__ import annotations

import pytest

from sagelaunch.jobspec.smp import SMPParameters, check_local_support

# the keys train_gpt_simple.py passes to smp.init, and SDK v2's validated extras
EXAMPLE_CONFIG = {
    "ddp": True, "tensor_parallel_degree": 1, "pipeline_parallel_degree": 1, "microbatches": 1,
    "shard_optimizer_state": False, "prescaled_batch": False, "fp16": False, "bf16": False,
    "offload_activations": False, "delayed_parameter_initialization": False, "optimize": "speed",
    "placement_strategy": "cluster", "activation_loading_horizon": 4, "skip_tracing": False, "auto_partition": False,
    "default_partition": 0, "static_mode": True, "fast_mode": True, "sharded_data_parallel_degree": 1,
}


def test_the_examples_smp_init_keys_are_accepted_with_one_note_per_kernel_tuning_key():
    notes = check_local_support(SMPParameters.model_validate(
        {**EXAMPLE_CONFIG, "checkpoint_attentions": True, "overlapping_allreduce": False, "load_partition": True,
         "partition_file": "partition.json"}))
    named = {n.split("=")[0] for n in notes}
    assert {"static_mode", "fast_mode", "checkpoint_attentions", "overlapping_allreduce", "load_partition",
            "partition_file", "optimize"} == named


def test_a_typo_is_still_refused_with_did_you_mean():
    with pytest.raises(ValueError, match="unknown SMP v1 parameter 'statik_mode'.*static_mode"):
        SMPParameters.model_validate({"statik_mode": True})


def test_sdk_v2_forward_only_pipeline_is_refused_by_name():
    with pytest.raises(ValueError, match="pipeline='_only_forward'.*fix"):
        check_local_support(SMPParameters.model_validate({"pipeline": "_only_forward"}))
