"""smp.DistributedModel's SMP v1 tracing and all-reduce arguments (modelparallel/model_arguments.py) and the
backward_passes_per_step count (data/accumulation.py), in process: every value checked, the ones we cannot
reproduce refused by name with the nearest supported setting."""

from __future__ import annotations

import pytest

from sagelaunch.modelparallel.core.config import load_parameters
from sagelaunch.modelparallel.data.accumulation import GradientAccumulation
from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.model_arguments import TracingArguments


@pytest.fixture
def cfg(monkeypatch):
    monkeypatch.delenv("SM_HP_MP_PARAMETERS", raising=False)
    return lambda **parameters: load_parameters(parameters)


def test_the_examples_arguments_are_accepted_at_every_layout(cfg):
    for parameters in ({}, {"pipeline_parallel_degree": 2}, {"tensor_parallel_degree": 2, "ddp": True}):
        args = TracingArguments.checked(cfg(**parameters), trace_device="gpu", backward_passes_per_step=4)
        assert (args.trace_device, args.backward_passes_per_step) == ("gpu", 4)
        TracingArguments.checked(cfg(**parameters), trace_device="cpu", overlapping_allreduce=False)


@pytest.mark.parametrize("name, value, allowed", [
    ("trace_device", "cuda", "'cpu' or 'gpu'"),
    ("trace_device", None, "'cpu' or 'gpu'"),
    ("trace_execution_times", "yes", "True or False"),
    ("overlapping_allreduce", 1, "True or False"),
    ("trace_memory_usage", None, "True or False"),
    ("backward_passes_per_step", 0, "an int ≥ 1"),
    ("backward_passes_per_step", 2.0, "an int ≥ 1"),
    ("backward_passes_per_step", True, "an int ≥ 1"),
])
def test_each_bad_value_is_refused_by_name(cfg, name, value, allowed):
    with pytest.raises(SMPValidationError, match=f"DistributedModel\\({name}=") as err:
        TracingArguments.checked(cfg(), **{name: value})
    assert (err.value.field, err.value.value, err.value.allowed) == (name, value, allowed)
    assert err.value.fix


def test_execution_times_need_the_gpu_trace_as_in_smp(cfg):
    with pytest.raises(SMPValidationError, match="trace_device='gpu'") as err:
        TracingArguments.checked(cfg(), trace_device="cpu", trace_execution_times=True)
    assert err.value.field == "trace_execution_times"


@pytest.mark.parametrize("name", ["trace_execution_times", "trace_memory_usage"])
def test_measured_partition_inputs_are_refused_only_where_an_auto_partition_happens(cfg, name):
    with pytest.raises(SMPValidationError, match="parameter counts") as err:
        TracingArguments.checked(cfg(pipeline_parallel_degree=2), **{name: True})
    assert (err.value.field, err.value.value) == (name, True) and f"{name}=False" in err.value.fix
    # nothing is auto-partitioned (pp == 1, or the layers placed by hand): the value changes nothing, in SMP too
    TracingArguments.checked(cfg(), **{name: True})
    TracingArguments.checked(cfg(pipeline_parallel_degree=2, auto_partition=False, default_partition=0),
                             **{name: True})


def test_accumulation_reduces_on_every_nth_backward_pass_and_refuses_a_step_in_between():
    acc = GradientAccumulation(3)
    reduced = []
    for _ in range(6):
        acc.begin_step()
        reduced.append(acc.reduce_now)
        acc.end_step(backward_ran=True)
    assert reduced == [False, False, True, False, False, True]
    acc.check_reduced()
    acc.begin_step()
    acc.end_step(backward_ran=False)  # an evaluation step (torch.no_grad) is not a backward pass
    acc.begin_step()
    acc.end_step(backward_ran=True)
    with pytest.raises(SMPValidationError, match="after 1 backward pass") as err:
        acc.check_reduced()
    assert (err.value.field, err.value.value) == ("backward_passes_per_step", 3)
    acc.restart()  # optimizer.zero_grad(): the window starts again
    acc.check_reduced()
    acc.begin_step()
    assert not acc.reduce_now


def test_one_pass_per_step_reduces_every_step():
    acc = GradientAccumulation(1)
    acc.begin_step()
    assert acc.reduce_now
