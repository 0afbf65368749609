"""jobspec: validated copies of the frozen spec, one SMP rule book for the estimators and smp.init, and one
profilerconfig.json encoding for the client and the profiler inside the job."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from sagelaunch.estimators import PyTorch
from sagelaunch.jobspec.profiling import profiler_config_file
from sagelaunch.jobspec.smp import NOT_IMPLEMENTED, SMPParameters
from sagelaunch.jobspec.spec import ProfilerSettings, replace
from sagelaunch.modelparallel.core.config import check_supported
from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.profiler_config import Profiler, ProfilerConfig

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


def _spec():
    return PyTorch(entry_point="train.py", framework_version="2.0.0", instance_type="local").to_spec("job-a")


def test_replace_validates_what_model_copy_would_accept():
    spec = _spec()
    assert spec.model_copy(update={"instance_count": "not-a-number"}).instance_count == "not-a-number"  # the trap
    with pytest.raises(ValidationError, match="instance_count"):
        replace(spec, instance_count="not-a-number")
    with pytest.raises(ValidationError, match="no_such_field"):
        replace(spec, no_such_field=1)
    copy = replace(spec, instance_count="2", job_name="job-b")
    assert (copy.compute.instance_count, copy.job_name, copy.inputs) == (2, "job-b", spec.inputs)
    assert copy.image_uri == spec.image_uri
    assert (spec.compute.instance_count, spec.job_name) == (1, "job-a")  # the original is untouched


def _mp(**parameters):
    return {"smdistributed": {"modelparallel": {"enabled": True, "parameters": parameters}},
            "mpi": {"enabled": True, "processes_per_host": 1}}


@pytest.mark.parametrize("parameters", [
    {"pipeline": "_only_forward"},
])
def test_a_local_job_refuses_at_construction_what_smp_init_refuses(parameters):
    mp = _mp(**parameters)
    with pytest.raises(ValidationError) as err:
        PyTorch(entry_point="train.py", framework_version="2.0.0", instance_type="local", distribution=mp)
    name = next(iter(parameters))
    assert f"mp_parameters.{name}=" in str(err.value) and "not supported by sagelaunch's modelparallel" in str(err.value)
    # smp.init refuses the same parameters with the same words
    with pytest.raises(SMPValidationError, match=f"mp_parameters.{name}=.*not supported by sagelaunch's modelparallel"):
        check_supported(SMPParameters.model_validate(parameters))
    # SageMaker runs the real SMP library, which has them (8 GPUs: 8 data-parallel replicas, so ddp)
    on_sagemaker = {**_mp(**{**parameters, "ddp": True}), "mpi": {"enabled": True, "processes_per_host": 8}}
    PyTorch(entry_point="train.py", framework_version="1.13.1", py_version="py39", instance_type="ml.p4d.24xlarge",
            role=ROLE, region="us-west-2", distribution=on_sagemaker)


def test_every_not_implemented_option_is_a_parameter_with_a_fix():
    for name, _, fix in NOT_IMPLEMENTED:
        assert name in SMPParameters.model_fields and "fix:" in fix


def _sent_profiler_config(settings: ProfilerSettings) -> dict:
    """The request's ProfilerConfig for a job with these settings (what a container's profilerconfig.json is from)."""
    from sagelaunch.launcher.common.request import profiler_request

    return profiler_request(replace(_spec(), profiler=settings))["ProfilerConfig"]


def test_the_profiler_reads_what_the_client_writes(tmp_path, monkeypatch):
    settings = ProfilerConfig(system_monitor_interval_millis=200,
                              profile_params=Profiler(cpu_profiling_duration=120, file_rotation_interval=30)).to_settings()
    path = tmp_path / "profilerconfig.json"
    path.write_text(json.dumps(profiler_config_file(_sent_profiler_config(settings))))
    monkeypatch.setenv("SAGELAUNCH_PROFILER_CONFIG", str(path))
    from sagelaunch.profiler.settings import Config

    cfg = Config().resolved()
    assert (cfg.system_monitor_interval_millis, cfg.cpu_profiling_duration, cfg.file_rotation_secs, cfg.disabled) \
        == (200, 120, 30, False)
    defaults = ProfilerSettings()
    path.write_text(json.dumps(profiler_config_file(_sent_profiler_config(defaults))))
    cfg = Config().resolved()
    assert (cfg.cpu_profiling_duration, cfg.file_rotation_secs) == (3600, 600)
