"""The spec's typed distribution: the estimators fill it, the request compiler writes it once, and the job side
(smp.init) and the local supervisor read the SMP parameters back as the same type."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from sagelaunch.estimators import PyTorch
from sagelaunch.jobspec.distribution import (
    DistributionSpec, ModelParallelSettings, model_parallel_degrees, mp_parameters_of,
)
from sagelaunch.jobspec.smp import SMPParameters
from sagelaunch.jobspec.spec import CodeSpec, replace
from sagelaunch.launcher.common.request import compile_create_training_job_request

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
PARAMETERS = {"partitions": 2, "tensor_parallel_degree": 2, "microbatches": 4, "ddp": True}


def _smp_spec():
    return PyTorch(entry_point="train.py", role=ROLE, region="us-west-2", framework_version="2.0.0",
                   instance_type="ml.p4d.24xlarge", instance_count=2,
                   distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": PARAMETERS}},
                                 "mpi": {"enabled": True, "processes_per_host": 8}}).to_spec("smp-1")


def test_code_spec_holds_no_raw_distribution_dict():
    assert CodeSpec.model_fields["distribution"].annotation is DistributionSpec
    assert not {"distribution_hyperparameters", "mp_parameters"} & set(CodeSpec.model_fields)


def test_the_parameters_go_out_once_and_come_back_as_the_same_type(monkeypatch):
    from sagelaunch.modelparallel.core.config import load_parameters

    spec = _smp_spec()
    typed = spec.code.distribution.smp
    assert isinstance(typed, SMPParameters) and (typed.pipeline_parallel_degree, typed.tensor_parallel_degree) == (2, 2)
    sent = compile_create_training_job_request(spec)["HyperParameters"]
    assert json.loads(sent["mp_parameters"]) == PARAMETERS  # as given: SDK v2 sends the user's dict
    assert mp_parameters_of(sent["mp_parameters"]) == typed  # what the local supervisor reads
    monkeypatch.setenv("SM_HP_MP_PARAMETERS", sent["mp_parameters"])
    assert load_parameters() == typed  # smp.init inside the job
    assert model_parallel_degrees(typed) == {"tensor_parallel_degree": 2, "pipeline_parallel_degree": 2}


def test_the_typed_part_survives_a_validated_copy():
    spec = _smp_spec()
    copy = replace(spec, instance_count=4)
    assert copy.code.distribution == spec.code.distribution and copy.code.distribution.smp == spec.code.distribution.smp
    assert compile_create_training_job_request(copy)["HyperParameters"]["mp_parameters"] == \
        compile_create_training_job_request(spec)["HyperParameters"]["mp_parameters"]


def test_no_distribution_writes_nothing():
    assert DistributionSpec().hyperparameters("ml.p4d.24xlarge", 8) == {}
    assert DistributionSpec(given=True).hyperparameters("ml.p4d.24xlarge", 8) == {}


def test_parameters_smp_init_would_refuse_never_reach_a_spec():
    with pytest.raises(ValidationError, match="microbatch"):
        ModelParallelSettings(parameters={"partitions": 2, "microbatch": 4})
