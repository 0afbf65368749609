"""SMP v1 parameters, the hardware rules, and the distribution dict shapes → hyperparameters."""

from __future__ import annotations

import warnings

import pytest
from pydantic import ValidationError

from sagelaunch.estimators.distribution import parse_distribution
from sagelaunch.jobspec.smp import SMPParameters, check_world

MP = {"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2, "ddp": True}}},
      "mpi": {"enabled": True, "processes_per_host": 8, "custom_mpi_options": "--mca btl_vader_single_copy_mechanism none"}}


def plan(distribution, framework="pytorch", version="2.0.0", instance_type="ml.p4d.24xlarge", count=1, gpus=8):
    return parse_distribution(distribution, framework=framework, framework_version=version,
                              instance_type=instance_type, instance_count=count, gpus_per_host=gpus)


def test_defaults_follow_the_smp_v1_table():
    p = SMPParameters()
    assert (p.pipeline_parallel_degree, p.microbatches, p.pipeline, p.optimize) == (1, 1, "interleaved", "memory")
    assert (p.placement_strategy, p.auto_partition, p.tensor_parallel_degree, p.ddp) == ("cluster", True, 1, False)
    assert (p.activation_loading_horizon, p.sharded_data_parallel_degree, p.contiguous, p.horovod) == (4, 1, True, False)
    assert p.effective_memory_weight == 0.8 and SMPParameters(optimize="speed").effective_memory_weight == 0.2
    assert SMPParameters(partitions=3).effective_active_microbatches == 5


def test_partitions_is_an_alias_of_pipeline_parallel_degree():
    assert SMPParameters.model_validate({"partitions": 4}).pipeline_parallel_degree == 4
    assert SMPParameters.model_validate({"pipeline_parallel_degree": 4}).partitions == 4
    with pytest.raises(ValidationError, match="aliases"):
        SMPParameters.model_validate({"partitions": 2, "pipeline_parallel_degree": 4})


def test_fp16_params_is_deprecated_alias_of_fp16():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert SMPParameters.model_validate({"fp16_params": True}).fp16 is True
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)


@pytest.mark.parametrize("params, needle", [
    ({"partitons": 2}, "did you mean 'partitions'"),
    ({"ddp": True, "horovod": True}, "exclusive"),
    ({"ddp_port": 1234}, "ddp_port=1234 needs ddp=True"),
    ({"partitions": 2, "auto_partition": False}, "default_partition is required"),
    ({"partitions": 2, "default_partition": 2}, "must be < pipeline_parallel_degree=2"),
    ({"fp16": True, "bf16": True}, "bf16=True excludes fp16"),
    ({"sharded_data_parallel_degree": 2, "tensor_parallel_degree": 2, "ddp": True}, "excludes tensor_parallel_degree"),
    ({"sharded_data_parallel_degree": 2, "shard_optimizer_state": True}, "drop shard_optimizer_state"),
    ({"tensor_parallel_degree": 2}, "needs ddp=True"),
    ({"placement_strategy": "DPX"}, "placement_strategy='DPX'"),
    ({"pipeline": "fast"}, "pipeline"),
    ({"microbatches": 0}, "microbatches"),
    ({"memory_weight": 1.5}, "memory_weight"),
])
def test_cross_rules_reject_with_the_field_named(params, needle):
    with pytest.raises(ValidationError) as info:
        SMPParameters.model_validate(params)
    assert needle in str(info.value)


def test_every_placement_permutation_is_accepted():
    for s in ("cluster", "spread", "DPT", "DTP", "PDT", "PTD", "TDP", "TPD"):
        assert SMPParameters(placement_strategy=s).placement_strategy == s


def test_check_world_hardware_rules():
    p = SMPParameters.model_validate({"partitions": 2, "tensor_parallel_degree": 2, "ddp": True})
    layout = check_world(p, 16, 8)
    assert (layout.data_parallel_degree, layout.reduced_data_parallel_degree) == (8, 4)
    with pytest.raises(ValueError, match="exceeds the 1 GPUs per instance"):
        check_world(p, 4, 1)
    with pytest.raises(ValueError, match="must divide the world size 6"):
        check_world(p, 6, 8)
    no_ddp = SMPParameters.model_validate({"partitions": 2})
    assert check_world(no_ddp, 2, 8).data_parallel_degree == 1
    with pytest.raises(ValueError, match="set mp_parameters.ddp=True"):
        check_world(no_ddp, 4, 8)
    # CPU processes (local runs): no GPU-count rule
    assert check_world(p, 4, 0).world_size == 4


def test_modelparallel_shape_gives_the_sdk_hyperparameters():
    pl = plan(MP, count=2)
    assert pl.strategy == "modelparallel" and pl.processes_per_host == 8
    assert pl.hyperparameters == {
        "sagemaker_mpi_enabled": True, "sagemaker_mpi_num_of_processes_per_host": 8,
        "sagemaker_mpi_custom_mpi_options": "--mca btl_vader_single_copy_mechanism none",
        "mp_parameters": {"partitions": 2, "ddp": True},
        "sagemaker_distributed_dataparallel_enabled": False, "sagemaker_instance_type": "ml.p4d.24xlarge",
    }
    assert pl.smp.pipeline_parallel_degree == 2


def test_modelparallel_needs_mpi_and_fits_the_hardware():
    with pytest.raises(ValueError, match="needs MPI"):
        plan({"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2}}}})
    too_many = {**MP, "mpi": {"enabled": True, "processes_per_host": 16}}
    with pytest.raises(ValueError, match="processes_per_host=16 exceeds the 8 GPUs"):
        plan(too_many)
    with pytest.raises(ValueError, match="SMP v1"):
        plan(MP, version="2.4.0")
    with pytest.raises(ValueError, match="needs GPU instances"):
        plan(MP, instance_type="ml.m5.xlarge", gpus=0)


def test_local_modelparallel_defaults_processes_to_pp_times_tp_for_any_version():
    d = {"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2}}}, "mpi": {"enabled": True}}
    pl = plan(d, version="2.6.0", instance_type="local", gpus=0)
    assert pl.processes_per_host == 2 and pl.hyperparameters["sagemaker_mpi_num_of_processes_per_host"] == 2


def test_dataparallel_torch_distributed_and_pytorchddp():
    dp = plan({"smdistributed": {"dataparallel": {"enabled": True}}}, version="2.0.1")
    assert dp.processes_per_host == 8 and dp.hyperparameters == {
        "sagemaker_distributed_dataparallel_enabled": True, "sagemaker_instance_type": "ml.p4d.24xlarge",
        "sagemaker_distributed_dataparallel_custom_mpi_options": ""}
    with pytest.raises(ValueError, match="dataparallel runs on"):
        plan({"smdistributed": {"dataparallel": {"enabled": True}}}, instance_type="ml.g5.12xlarge", gpus=4)
    td = plan({"torch_distributed": {"enabled": True}}, version="2.6.0", instance_type="ml.g5.12xlarge", gpus=4)
    assert td.processes_per_host == 4
    assert td.hyperparameters == {"sagemaker_torch_distributed_enabled": True, "sagemaker_instance_type": "ml.g5.12xlarge"}
    with pytest.raises(ValueError, match="torch_distributed needs GPU or Trainium"):
        plan({"torch_distributed": {"enabled": True}}, instance_type="ml.m5.xlarge", gpus=0)
    with pytest.raises(ValueError, match="PyTorch-only"):
        plan({"torch_distributed": {"enabled": True}}, framework="tensorflow", version="2.12.0")
    # SDK v2 2.257 runs pytorchddp as smdistributed dataparallel: its hyperparameters and its hardware
    ddp = plan({"pytorchddp": {"enabled": True}}, version="1.13.1")
    assert ddp.processes_per_host == 8 and ddp.hyperparameters == {
        "sagemaker_distributed_dataparallel_enabled": True, "sagemaker_instance_type": "ml.p4d.24xlarge",
        "sagemaker_distributed_dataparallel_custom_mpi_options": ""}
    with pytest.raises(ValueError, match=r"pytorchddp as SageMaker's data-parallel library.*runs on ml\.p3\.16xlarge"
                                         r".*torch_distributed"):
        plan({"pytorchddp": {"enabled": True}}, version="1.13.1", instance_type="ml.g5.12xlarge", gpus=4)
    with pytest.raises(ValueError, match="pytorchddp needs a GPU instance"):
        plan({"pytorchddp": {"enabled": True}}, version="1.13.1", instance_type="ml.m5.xlarge", gpus=0)


def test_shape_errors_name_the_key():
    with pytest.raises(ValueError, match=r"distribution\.mpi\.processes_per_host"):
        plan({"mpi": {"enabled": True, "processes_per_host": 0}})
    with pytest.raises(ValueError, match=r"distribution\.torch_distrbuted"):
        plan({"torch_distrbuted": {"enabled": True}})
    with pytest.raises(ValueError, match="one strategy per job"):
        plan({"torch_distributed": {"enabled": True}, "smdistributed": {"dataparallel": {"enabled": True}}})
    with pytest.raises(ValueError, match=r"parameters: mp_parameters: unknown SMP v1 parameter 'microbatch'"):
        plan({**MP, "smdistributed": {"modelparallel": {"enabled": True, "parameters": {"microbatch": 2}}}})


def test_tensorflow_rejects_pytorch_only_smp_keys():
    d = {"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2, "tensor_parallel_degree": 2, "ddp": True}}},
         "mpi": {"enabled": True, "processes_per_host": 4}}
    with pytest.raises(ValueError, match="not supported by SMP v1 for tensorflow"):
        plan(d, framework="tensorflow", version="2.12.0", instance_type="local", gpus=0)


def test_disabled_or_empty_distribution_is_one_process():
    assert plan(None).processes_per_host == 1 and plan({}).strategy == "none"
    assert plan({"torch_distributed": {"enabled": False}}).hyperparameters == {}
