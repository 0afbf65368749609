"""The InstanceType record: built once per name from the catalog, the one answer to "where does it run, with what"."""

from __future__ import annotations

import pytest

from sagelaunch.jobspec import catalog
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.instance_types import instance_type, is_local


def test_a_gpu_type_holds_the_catalogs_facts_with_their_sources():
    p4d = instance_type("ml.p4d.24xlarge")
    assert (p4d.backend, p4d.kind, p4d.processor, p4d.gpus, p4d.vcpus) == ("sagemaker", "gpu", "gpu", 8, 96)
    assert p4d.source == "sdk:instance_gpu_info.json" and not p4d.gpus_from_machine
    assert p4d.accelerators is not None and p4d.accelerators.accelerator == "A100-SXM4-40GB"
    assert p4d.accelerator_count == 8 and p4d.accelerators.memory_bytes == 40 * 2**30
    assert p4d.accelerators.peak_flops["bf16"] == 312e12
    assert set(p4d.accelerators.sources) >= {"peak_flops", "hbm_bandwidth", "intra_node_bandwidth"}
    assert instance_type("ml.p4d.24xlarge") is p4d  # built once


def test_cpu_trainium_and_local_types():
    cpu, trn = instance_type("ml.m5.xlarge"), instance_type("ml.trn1.32xlarge")
    assert (cpu.processor, cpu.gpus, cpu.accelerators, cpu.has_gpus) == ("cpu", 0, None, False)
    assert trn.processor == "neuron" and trn.accelerator_count == 16 and trn.gpus == 0
    local, local_gpu = instance_type("local"), instance_type("local_gpu")
    assert (local.backend, local.processor, local.gpus, local.gpus_from_machine) == ("local", "cpu", 0, False)
    assert (local_gpu.backend, local_gpu.processor, local_gpu.gpus_from_machine) == ("local", "gpu", True)
    assert local_gpu.gpus == catalog.LOCAL_GPU_MINIMUM and local.is_local and not cpu.is_local


def test_every_catalog_type_has_a_record_agreeing_with_the_catalog():
    for name in (*catalog.training_instance_types(), *catalog.LOCAL_INSTANCE_TYPES):
        record = instance_type(name)
        assert record.processor == catalog.processor_for(name) and record.gpus == catalog.gpus_per_host(name)
        assert record.is_local == is_local(name)


def test_an_unknown_name_is_refused_with_did_you_mean():
    with pytest.raises(SagelaunchError) as e:
        instance_type("ml.p4d.24xlarg")
    assert e.value.field == "instance_type" and "'ml.p4d.24xlarge'" in e.value.fix
    with pytest.raises(SagelaunchError) as e:
        instance_type("locl")
    assert "'local'" in e.value.fix
    assert not is_local("ml.c6g.xlarge") and not is_local("locl")  # any name may be asked, serving types too


def test_the_planner_reads_the_record():
    from sagelaunch.planner.hardware import hardware

    facts = instance_type("ml.p5.48xlarge").accelerators
    hw = hardware("ml.p5.48xlarge")
    assert facts is not None and hw.memory_bytes == facts.memory_bytes and hw.gpus_per_instance == facts.count
    assert hw.peak_flops == {str(k): v for k, v in facts.peak_flops.items()}
    with pytest.raises(SagelaunchError) as e:
        hardware("local_gpu")
    assert "ml.p4d.24xlarge" in e.value.allowed


def test_the_machine_is_probed_once_for_the_estimators_and_the_local_backend(monkeypatch):
    from sagelaunch.launcher.common import environment
    from sagelaunch.launcher.local.plan import visible_gpus

    calls = []
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setattr(environment, "_nvml_device_count", lambda: calls.append(1) or 3)
    environment._probe_gpus.cache_clear()
    try:
        assert environment.local_gpu_count() == 3
        assert visible_gpus("local_gpu", {}) == ["0", "1", "2"] and visible_gpus("local", {}) == []
        assert len(calls) == 1
    finally:
        environment._probe_gpus.cache_clear()
