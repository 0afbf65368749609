"""PyTorch / TensorFlow estimators: offline validation at construction and assignment, the spec they build."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from sagelaunch.estimators import PyTorch, TensorFlow, TrainingInput
from sagelaunch.jobspec import catalog as support
from sagelaunch.launcher.common.request import compile_create_training_job_request
from sagelaunch.profiler_config import Profiler, ProfilerConfig

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
SM = dict(entry_point="train.py", role=ROLE, region="us-west-2")


def pt(**kw):
    return PyTorch(**{**SM, "framework_version": "2.0.0", "instance_type": "ml.p4d.24xlarge", **kw})


def error_of(fn, **kw) -> str:
    with pytest.raises(ValidationError) as info:
        fn(**kw)
    return str(info.value)


def test_image_uri_resolves_to_the_full_tag_and_py_version_is_derived():
    est = pt(profiler_config=ProfilerConfig())
    assert est.training_image_uri() == (
        "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0-gpu-py310-cu118-ubuntu20.04-sagemaker")
    assert est.resolved.py_version == "py310"
    tf = TensorFlow(**SM, framework_version="2.11.1", instance_type="ml.g4dn.12xlarge", profiler_config=ProfilerConfig())
    assert tf.training_image_uri().endswith("tensorflow-training:2.11.1-gpu-py39-cu112-ubuntu20.04-sagemaker")


def test_positional_arguments_follow_the_sdk_order():
    est = PyTorch("train.py", "2.0.0", "py310", instance_type="local")
    assert (est.entry_point, est.framework_version, est.py_version) == ("train.py", "2.0.0", "py310")
    with pytest.raises(TypeError, match="both by position and by name"):
        PyTorch("train.py", entry_point="x.py", instance_type="local", framework_version="2.0.0")


def test_unknown_arguments_are_rejected():
    assert "instance_typ" in error_of(pt, instance_typ="ml.p4d.24xlarge")


@pytest.mark.parametrize("kw, needles", [
    ({"instance_type": "ml.p4d.24xl"}, ["instance_type", "did you mean 'ml.p4d.24xlarge'?"]),
    ({"framework_version": "2.0.7"}, ["framework_version='2.0.7'", "supported: ", "2.0.0"]),
    ({"py_version": "py39"}, ["py_version='py39'", "py310"]),
    ({"region": "us-west-9"}, ["region='us-west-9'", "did you mean"]),
    ({"role": "my role!"}, ["role='my role!'", "arn:aws:iam::<account-id>:role/myrole"]),
    ({"role": "arn:aws:iam::12:role/x"}, ["role='arn:aws:iam::12:role/x'", "did you mean"]),
    ({"role": None}, ["role is required"]),
    ({"output_path": "/tmp/out"}, ["output_path='/tmp/out'", "s3://"]),
    ({"use_spot_instances": True}, ["max_wait is required"]),
    ({"max_wait": 10}, ["max_wait=10 applies to spot"]),
    ({"subnets": ["subnet-1"]}, ["subnets and security_group_ids"]),
    ({"hyperparameters": {"sagemaker_program": "x"}}, ["hyperparameters['sagemaker_program']"]),
    ({"environment": {"1BAD": "x"}}, ["environment key '1BAD'"]),
    ({"base_job_name": "my_job!"}, ["base_job_name='my_job!'", "did you mean 'my-job'"]),
    ({"image_uri": "not a uri"}, ["image_uri='not a uri'"]),
    ({"instance_count": 0}, ["instance_count"]),
])
def test_rejections_name_field_value_and_fix(kw, needles):
    msg = error_of(pt, **kw)
    for needle in needles:
        assert needle in msg


def test_gpu_image_on_gpu_instance_and_cpu_image_on_cpu_instance():
    assert "-cpu-py310-ubuntu20.04" in pt(instance_type="ml.m5.xlarge").training_image_uri()
    gpu_image = pt().training_image_uri()
    assert "is a GPU image" in error_of(pt, instance_type="ml.c5.xlarge", image_uri=gpu_image)
    cpu_image = gpu_image.replace("2.0.0-gpu-py310-cu118", "2.0.0-cpu-py310")
    assert "is a CPU image" in error_of(pt, image_uri=cpu_image)
    assert "Neuron image" in error_of(pt, instance_type="ml.trn1.32xlarge")


def test_profiler_support_matrix_applies_to_sagemaker_jobs():
    pc = ProfilerConfig(profile_params=Profiler(cpu_profiling_duration=3600))  # SageMaker Profiler's detailed capture
    assert "SageMaker Profiler supports pytorch 2.0.0, 1.13.1" in error_of(pt, framework_version="2.1.0", profiler_config=pc)
    assert "SageMaker Profiler is available in us-east-1" in error_of(pt, region="ap-south-1", profiler_config=pc)
    msg = error_of(pt, instance_type="ml.g5.12xlarge", profiler_config=pc)
    assert "supports ml.p4d.24xlarge, ml.p3dn.24xlarge, ml.g4dn.12xlarge" in msg
    assert "profiler_config is set while disable_profiler=True" in error_of(pt, profiler_config=pc, disable_profiler=True)


def test_monitoring_only_is_valid_on_every_instance_type_and_version():
    monitoring = ProfilerConfig(system_monitor_interval_millis=500)
    for version in ("2.1.0", "2.8.0"):
        spec = pt(framework_version=version, instance_type="ml.g5.12xlarge", region="ap-south-1",
                  profiler_config=monitoring).to_spec("mon-job")
        profiler = spec.observability.profiler
        assert profiler.system_monitor_interval_millis == 500 and not profiler.detailed
        assert spec.observability.profiler_rules == ()  # no DetailedProfilerProcessing job (it is billed)


@pytest.mark.parametrize("instance_type", ["local", "local_gpu"])
def test_local_runs_accept_every_version_with_the_profiler(instance_type):
    for fw, cls in (("pytorch", PyTorch), ("tensorflow", TensorFlow)):
        for version in support.framework_versions(fw):
            est = cls(entry_point="train.py", framework_version=version, instance_type=instance_type,
                      region="ap-south-1", output_path="/tmp/sagelaunch-out",
                      profiler_config=ProfilerConfig(profile_params=Profiler(cpu_profiling_duration=60)))
            spec = est.to_spec("local-job")
            assert spec.is_local and spec.observability.profiler.cpu_profiling_duration == 60
            assert spec.output.output_path == "/tmp/sagelaunch-out"


def test_assignment_is_validated_and_rederived():
    est = pt()
    est.instance_type = "ml.g5.12xlarge"
    assert est.resolved.gpus_per_host == 4
    with pytest.raises(ValidationError, match="did you mean 'ml.p4d.24xlarge'"):
        est.instance_type = "ml.p4d.24xlarg"
    with pytest.raises(ValidationError, match="framework_version"):
        est.framework_version = "9.9.9"
    est.framework_version = "2.6"
    assert est.resolved.framework_version == "2.6.0" and est.resolved.py_version == "py312"


def test_a_rejected_assignment_leaves_the_estimator_unchanged():
    est = pt(profiler_config=ProfilerConfig(profile_params=Profiler()))
    with pytest.raises(ValidationError, match="SageMaker Profiler supports"):
        est.instance_type = "ml.g5.xlarge"  # valid type, but not profiler-supported
    assert est.instance_type == "ml.p4d.24xlarge" and est.resolved.gpus_per_host == 8


def test_spec_fields_from_distribution_and_profiler():
    est = pt(
        instance_count=2,
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2, "ddp": True}}},
                      "mpi": {"enabled": True, "processes_per_host": 8}},
        profiler_config=ProfilerConfig(system_monitor_interval_millis=500), hyperparameters={"epochs": 2},
        tags={"team": "ml"}, base_job_name="roberta",
    )
    spec = est.to_spec(inputs={"train": "s3://my-bucket/train", "test": TrainingInput("s3://my-bucket/test", content_type="text/csv")})
    assert spec.compute.gpus_per_host == 8 and spec.compute.processes_per_host == 8
    distribution = spec.code.distribution
    assert distribution.modelparallel is not None and distribution.modelparallel.parameters == {"partitions": 2, "ddp": True}
    assert distribution.smp is not None and distribution.smp.pipeline_parallel_degree == 2 and distribution.mpi_enabled
    assert compile_create_training_job_request(spec)["HyperParameters"]["sagemaker_mpi_num_of_processes_per_host"] == "8"
    assert spec.observability.profiler.system_monitor_interval_millis == 500
    assert [c.name for c in spec.inputs] == ["train", "test"] and spec.inputs[1].content_type == "text/csv"
    assert spec.tags == (("team", "ml"),) and spec.code.hyperparameters == {"epochs": 2}
    assert re.fullmatch(r"roberta-\d{4}-\d\d-\d\d-\d\d-\d\d-\d\d-\d{3}", spec.job_name)


def test_default_job_name_uses_the_image_repository_and_fits_63_chars():
    assert re.fullmatch(r"pytorch-training-\d{4}(-\d\d){5}-\d{3}", pt().make_job_name())
    long = pt(base_job_name="a" * 63).make_job_name()
    assert len(long) <= 63 and re.fullmatch(r"^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}$", long)
    with pytest.raises(ValueError, match="did you mean"):
        pt().to_spec("bad_name")


def test_entry_point_and_source_dir_in_the_spec(tmp_path):
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("print('hi')\n")
    est = pt(source_dir=str(tmp_path / "code"), ignore_patterns=["*.ckpt"])
    spec = est.to_spec("j1")
    code = spec.code
    assert (code.entry_point, code.source_dir, code.ignore_patterns) == ("train.py", str(tmp_path / "code"),
                                                                         ("*.ckpt",))
    est.check_files()
    lone = pt(entry_point=str(tmp_path / "code" / "train.py")).to_spec("j2")
    assert lone.code.entry_point == "train.py" and lone.code.entry_point_path == str(tmp_path / "code" / "train.py")
    with pytest.raises(ValueError, match="no such file"):
        pt(entry_point=str(tmp_path / "missing.py")).fit()


def test_inputs_must_be_s3_for_sagemaker_and_may_be_folders_locally():
    with pytest.raises(ValueError, match="reads its data from S3"):
        pt().to_spec("j", inputs="/data/train")
    local = PyTorch(entry_point="t.py", framework_version="2.0.0", instance_type="local")
    assert local.to_spec("j", inputs="/data/train").inputs[0].name == "training"
    with pytest.raises(ValueError, match="channel name"):
        local.to_spec("j", inputs={"bad name": "/data"})


def test_deploy_before_fit_says_what_to_do():
    with pytest.raises(ValueError, match="call fit\\(\\) first"):
        pt().deploy(instance_type="ml.m5.large")


def test_region_defaults_from_the_environment(monkeypatch):
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    est = PyTorch(entry_point="t.py", framework_version="2.0.0", instance_type="ml.p3dn.24xlarge", role=ROLE)
    assert est.resolved.region == "eu-central-1" and ".eu-central-1." in est.training_image_uri()
