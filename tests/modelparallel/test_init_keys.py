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


def test_older_releases_underscored_keys_are_accepted_with_their_meaning():
    # the May 2022 GPT-2 example's smp.init keys
    params = SMPParameters.model_validate({**EXAMPLE_CONFIG, "_match_weights": True, "_fp32_grad_accumulation": True})
    assert params.match_weights and params.fp32_grad_accumulation
    named = {n.split("=")[0] for n in check_local_support(params)}
    assert not named & {"match_weights", "fp32_grad_accumulation"}  # both honoured: neither warned about
    with pytest.raises(ValueError, match="unknown SMP v1 parameter 'match_weights'.*_match_weights"):
        SMPParameters.model_validate({"match_weights": True})  # only the spelling SMP had


def test_fp32_gradient_accumulation_with_half_precision_is_refused_by_name():
    params = SMPParameters.model_validate({"fp16": True, "_fp32_grad_accumulation": True})
    with pytest.raises(ValueError, match=r"fp32_grad_accumulation=True with fp16=True, bf16=False .*fix: drop "
                                         r"_fp32_grad_accumulation, or train in fp32"):
        check_local_support(params)
