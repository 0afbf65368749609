"""Each strategy object of `distribution=`: where it sits in the dict, its frameworks, its SageMaker hardware rules,
what a local job refuses, its processes per host and the hyperparameters it adds (SDK v2's, in v2's order)."""

from __future__ import annotations

import pytest

from sagelaunch.estimators.distribution import parse_distribution
from sagelaunch.estimators.distribution_shapes import DistributionOptions
from sagelaunch.estimators.distribution_strategies import STRATEGIES

P4D, G5, CPU = "ml.p4d.24xlarge", "ml.g5.12xlarge", "ml.m5.xlarge"
GPUS = {P4D: 8, G5: 4, CPU: 0, "local": 0}


def plan(distribution, framework="pytorch", version="2.0.1", instance_type=P4D, count=2):
    return parse_distribution(distribution, framework=framework, framework_version=version,
                              instance_type=instance_type, instance_count=count, gpus_per_host=GPUS[instance_type])


def _sections(model=DistributionOptions, prefix=""):
    """Every leaf section of the dict's shape ("smdistributed.modelparallel", "mpi", …)."""
    for name, info in model.model_fields.items():
        inner = next(a for a in info.annotation.__args__ if a is not type(None))
        if "enabled" in inner.model_fields:
            yield prefix + name
        else:
            yield from _sections(inner, f"{prefix}{name}.")


def test_every_section_of_the_dict_has_one_strategy():
    keys = [s.key for s in STRATEGIES]
    assert sorted(keys) == sorted(_sections()) and len(set(s.name for s in STRATEGIES)) == len(STRATEGIES)


def test_mpi_alone_runs_its_processes_and_sends_its_options():
    p = plan({"mpi": {"enabled": True, "processes_per_host": 2, "custom_mpi_options": "-x NCCL_DEBUG=INFO"}},
             framework="tensorflow", version="2.13.0")
    assert (p.strategy, p.processes_per_host) == ("mpi", 2)
    assert p.hyperparameters == {"sagemaker_mpi_enabled": True, "sagemaker_mpi_num_of_processes_per_host": 2,
                                 "sagemaker_mpi_custom_mpi_options": "-x NCCL_DEBUG=INFO"}
    on_gpus = plan({"mpi": {"enabled": True}}, instance_type=G5)
    assert on_gpus.processes_per_host == 4 and on_gpus.hyperparameters["sagemaker_mpi_num_of_processes_per_host"] == 4
    assert plan({"mpi": {"enabled": True}}, instance_type=CPU).processes_per_host == 1


def test_a_disabled_section_still_sends_its_off_entries_before_the_strategy_s():
    # v2 writes sagemaker_mpi_enabled / the smdistributed entries for any given section, enabled or not
    p = plan({"mpi": {"enabled": False}, "smdistributed": {"dataparallel": {"enabled": False}},
              "torch_distributed": {"enabled": True}}, version="2.0.1")
    assert p.strategy == "torch_distributed"
    assert list(p.hyperparameters.items()) == [
        ("sagemaker_mpi_enabled", False), ("sagemaker_distributed_dataparallel_enabled", False),
        ("sagemaker_instance_type", P4D), ("sagemaker_torch_distributed_enabled", True)]


def test_modelparallel_entries_come_in_v2_order_and_its_minimum_is_pp_times_tp_on_cpu():
    d = {"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2, "tensor_parallel_degree": 2,
                                                                               "ddp": True}}},
         "mpi": {"enabled": True}}
    assert list(plan(d, version="1.13.1").hyperparameters) == [
        "sagemaker_mpi_enabled", "sagemaker_mpi_num_of_processes_per_host", "sagemaker_mpi_custom_mpi_options",
        "mp_parameters", "sagemaker_distributed_dataparallel_enabled", "sagemaker_instance_type"]
    local = plan(d, version="2.6.0", instance_type="local", count=1)
    assert local.processes_per_host == 4 and local.mp_parameters == d["smdistributed"]["modelparallel"]["parameters"]


def test_modelparallel_local_refuses_what_sagelaunch_smp_lacks_and_sagemaker_does_not():
    d = {"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2, "ddp": True,
                                                                             "pipeline": "_only_forward"}}},
         "mpi": {"enabled": True, "processes_per_host": 8}}
    with pytest.raises(ValueError, match=r"modelparallel\.parameters: .*pipeline='_only_forward' is not supported by sagelaunch"):
        plan(d, version="2.0.0", instance_type="local", count=1)
    assert plan(d, version="2.0.0").smp.pipeline == "_only_forward"  # SageMaker's SMP v1 has it


def test_dataparallel_answers_to_the_catalog_on_sagemaker_only():
    d = {"smdistributed": {"dataparallel": {"enabled": True, "custom_mpi_options": "-verbose"}}}
    assert plan(d).hyperparameters["sagemaker_distributed_dataparallel_custom_mpi_options"] == "-verbose"
    with pytest.raises(ValueError, match="dataparallel supports pytorch"):
        plan(d, version="2.6.0")
    assert plan(d, version="2.6.0", instance_type="local").processes_per_host == 1  # no image, no catalog rule


@pytest.mark.parametrize("key", ["torch_distributed", "pytorchddp"])
def test_pytorch_only_strategies_name_what_tensorflow_uses(key):
    with pytest.raises(ValueError, match=rf"distribution\.{key} is PyTorch-only; for tensorflow use smdistributed or mpi"):
        plan({key: {"enabled": True}}, framework="tensorflow", version="2.13.0", instance_type="local")


@pytest.mark.parametrize("key", ["parameter_server", "multi_worker_mirrored_strategy"])
def test_tensorflow_strategies_add_their_one_entry_and_refuse_pytorch(key):
    p = plan({key: {"enabled": True}}, framework="tensorflow", version="2.13.0", instance_type=CPU)
    assert (p.strategy, p.processes_per_host, p.hyperparameters) == (key, 1, {f"sagemaker_{key}_enabled": True})
    with pytest.raises(ValueError, match=rf"distribution\.{key} is TensorFlow-only; for PyTorch use torch_distributed"):
        plan({key: {"enabled": True}}, instance_type="local")


def test_torch_distributed_on_trainium_and_locally():
    assert plan({"torch_distributed": {"enabled": True}}, instance_type="local").hyperparameters == {
        "sagemaker_torch_distributed_enabled": True, "sagemaker_instance_type": "local"}
    with pytest.raises(ValueError, match="torch_distributed supports PyTorch"):
        plan({"torch_distributed": {"enabled": True}}, version="1.8.0")


def test_the_one_strategy_rule_lists_every_enabled_one_in_table_order():
    with pytest.raises(ValueError, match="enables smdistributed.modelparallel and pytorchddp and parameter_server;"):
        plan({"parameter_server": {"enabled": True}, "pytorchddp": {"enabled": True},
              "smdistributed": {"modelparallel": {"enabled": True}}, "mpi": {"enabled": True}})
