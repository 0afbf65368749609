"""Thousands of random estimator arguments, valid and invalid: construction either succeeds and the
request passes botocore's validation against the real SageMaker model, or fails with a validation
error that names one of the given arguments. Nothing else may escape."""

from __future__ import annotations

import botocore.session
import botocore.validate
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from sagelaunch.estimators import PyTorch, TensorFlow, TrainingInput
from sagelaunch.jobspec import catalog as support
from sagelaunch.jobspec.smp import SMPParameters
from sagelaunch.profiler_config import Profiler, ProfilerConfig

SHAPE = botocore.session.get_session().get_service_model("sagemaker").operation_model("CreateTrainingJob").input_shape
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
SETTINGS = settings(max_examples=1500, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

junk = st.text(max_size=12)
versions = st.sampled_from([*support.framework_versions("pytorch"), *support.framework_versions("tensorflow"),
                            "2.0", "2.6", "2.12", "9.9.9", "1.0.0"])
instance_types = st.sampled_from(["ml.p4d.24xlarge", "ml.p3dn.24xlarge", "ml.g4dn.12xlarge", "ml.g5.12xlarge",
                                  "ml.m5.xlarge", "ml.c5.2xlarge", "ml.p5.48xlarge", "ml.trn1.32xlarge", "local",
                                  "local_gpu", "ml.p4d.24xl", "p4d", "ml.g5.12xlarge "])
smp_values = st.fixed_dictionaries({}, optional={
    "partitions": st.integers(-1, 9), "pipeline_parallel_degree": st.integers(0, 9),
    "tensor_parallel_degree": st.integers(0, 9), "microbatches": st.integers(0, 8), "ddp": st.booleans(),
    "horovod": st.booleans(), "ddp_port": st.integers(0, 70000), "auto_partition": st.booleans(),
    "default_partition": st.integers(-1, 9), "fp16": st.booleans(), "bf16": st.booleans(),
    "placement_strategy": st.sampled_from(["cluster", "spread", "DPT", "TPD", "XYZ", "PP"]),
    "pipeline": st.sampled_from(["simple", "interleaved", "fast"]), "optimize": st.sampled_from(["speed", "memory", "x"]),
    "sharded_data_parallel_degree": st.integers(0, 16), "shard_optimizer_state": st.booleans(),
    "memory_weight": st.floats(-1, 2, allow_nan=False), "active_microbatches": st.integers(0, 9),
    "offload_activations": st.booleans(), "activation_loading_horizon": st.integers(0, 9),
    "delayed_parameter_initialization": st.booleans(), "tensor_parallel_seed": st.integers(-1, 9),
    "unknown_key": st.integers(),
})
distributions = st.one_of(
    st.none(), st.just({}),
    st.builds(lambda p, n, c: {"smdistributed": {"modelparallel": {"enabled": True, "parameters": p}},
                               "mpi": {"enabled": True, **({"processes_per_host": n} if n else {}), "custom_mpi_options": c}},
              smp_values, st.integers(0, 16), st.sampled_from(["", "-x NCCL_DEBUG=INFO"])),
    st.sampled_from([{"smdistributed": {"dataparallel": {"enabled": True}}}, {"torch_distributed": {"enabled": True}},
                     {"pytorchddp": {"enabled": True}}, {"mpi": {"enabled": True}}, {"parameter_server": {"enabled": True}},
                     {"torch_distributed": {"enabled": True}, "pytorchddp": {"enabled": True}},
                     {"smdistributed": {"modelparallel": {"enabled": True}}}, {"bogus": {}}, "torch"]),
)
profilers = st.one_of(
    st.none(), st.just(ProfilerConfig()),
    st.builds(lambda i, d, r, s: {"system_monitor_interval_millis": i, "s3_output_path": s,
                                  "profile_params": {"cpu_profiling_duration": d, "file_rotation_interval": r}},
              st.sampled_from([None, 100, 500, 60000, 7, -1]), st.integers(-5, 10**7), st.integers(-5, 10**4),
              st.sampled_from([None, "s3://prof-bucket/p", "s3:/x", "/tmp/p"])),
)
json_values = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                           max_leaves=6)

WILD = st.fixed_dictionaries(
    {"entry_point": st.sampled_from(["train.py", "src/train.py", "", "s3://b/train.py", "dir/"]),
     "instance_type": instance_types},
    optional={
        "framework_version": versions, "py_version": st.sampled_from([None, "py38", "py39", "py310", "py311", "py312", "py2", "3.10"]),
        "role": st.sampled_from([ROLE, "MyRole", "arn:aws:iam::1:role/x", None]),
        "region": st.sampled_from(["us-west-2", "us-east-1", "eu-west-1", "ap-south-1", "cn-north-1", "us-west-9", "mars-1", None]),
        "instance_count": st.integers(-1, 12), "hyperparameters": st.none() | st.dictionaries(st.text(max_size=10), json_values, max_size=5),
        "distribution": distributions, "profiler_config": profilers, "disable_profiler": st.booleans(),
        "output_path": st.sampled_from([None, "s3://out-bucket/x", "/tmp/out", "s3://A/b", ""]),
        "checkpoint_s3_uri": st.sampled_from([None, "s3://ckpt-bucket/c", "s3//bad"]),
        "checkpoint_local_path": st.sampled_from([None, "/opt/ml/checkpoints", "relative"]),
        "max_run": st.integers(-5, 3_000_000), "use_spot_instances": st.booleans(),
        "max_wait": st.none() | st.integers(-5, 3_000_000), "volume_size": st.integers(-1, 20000),
        "volume_kms_key": st.sampled_from([None, "alias/k", "bad key"]), "output_kms_key": st.sampled_from([None, "alias/o"]),
        "subnets": st.sampled_from([None, ["subnet-0a"], [], ["bad"]]), "security_group_ids": st.sampled_from([None, ["sg-0a"], ["x"]]),
        "enable_network_isolation": st.booleans(), "encrypt_inter_container_traffic": st.booleans(),
        "environment": st.none() | st.dictionaries(st.sampled_from(["A", "B_1", "1X", "x-y"]), st.text(max_size=5), max_size=3),
        "tags": st.none() | st.dictionaries(st.text(max_size=6), st.text(max_size=6), max_size=3),
        "base_job_name": st.none() | st.sampled_from(["roberta", "a" * 70, "bad_name", "-x"]) | junk,
        "image_uri": st.sampled_from([None, "123456789012.dkr.ecr.us-west-2.amazonaws.com/custom:2.1.0-gpu-py310", "nope"]),
        "ignore_patterns": st.none() | st.lists(st.sampled_from(["*.ckpt", "data/"]), max_size=2),
        "container_log_level": st.integers(-5, 60), "unexpected": st.integers(),
    },
)


@st.composite
def estimator_args(draw):
    """A coherent, mostly valid job, then 0-2 arguments replaced by wild (often invalid) values."""
    framework = draw(st.sampled_from([PyTorch, TensorFlow]))
    local = draw(st.booleans())
    base = {
        "entry_point": "train.py",
        "framework_version": draw(st.sampled_from(support.framework_versions(framework.framework))),
        "instance_type": draw(st.sampled_from(["local", "local_gpu"] if local else
                                              ["ml.p4d.24xlarge", "ml.g4dn.12xlarge", "ml.m5.xlarge", "ml.g5.48xlarge"])),
        "region": draw(st.sampled_from(["us-west-2", "eu-west-1", "us-east-1"])),
        "hyperparameters": draw(st.none() | st.dictionaries(st.text(min_size=1, max_size=10), json_values, max_size=5)),
        "profiler_config": draw(st.none() | st.just(ProfilerConfig(profile_params=Profiler(cpu_profiling_duration=60)))),
        "max_run": draw(st.integers(1, 100_000)), "volume_size": draw(st.integers(1, 500)),
        "tags": draw(st.none() | st.dictionaries(st.text(min_size=1, max_size=6), st.text(max_size=6), max_size=3)),
        "instance_count": draw(st.integers(1, 4)),
    }
    if not local:
        base["role"] = ROLE
        base["output_path"] = "s3://out-bucket/jobs"
    wild = draw(WILD)
    k = draw(st.integers(0, 2))
    return framework, {**base, **dict(list(wild.items())[:k])}


INPUTS = st.one_of(st.none(), st.sampled_from(["s3://data-bucket/train", "/local/data", "s3://x"]),
                   st.builds(lambda u, m: {"train": TrainingInput(u, input_mode=m)},
                             st.sampled_from(["s3://data-bucket/t", "/d"]), st.sampled_from([None, "File", "FastFile"])))


def names_a_field(err: ValidationError, given: set[str]) -> bool:
    """Every error names one of the given fields: in its loc, or (cross-field checks, one per line) in its
    message. str(err) would not do: pydantic echoes the whole input dict there, which names them all."""
    for e in err.errors():
        loc = [str(part) for part in e["loc"]]
        if any(part in given for part in loc):
            continue
        lines = e["msg"].removeprefix("Value error, ").splitlines()
        if not lines or not all(any(name in line for name in given) for line in lines):
            return False
    return True


def test_names_a_field_ignores_the_echoed_input():
    with pytest.raises(ValidationError) as unnamed:
        PyTorch(entry_point="train.py", instance_type="local", framework_version="2.0.0", region="us-west-2",
                hyperparameters={"role": 1}, volume_size="x")
    assert names_a_field(unnamed.value, {"volume_size"})
    assert not names_a_field(unnamed.value, {"hyperparameters", "role"})  # they are only in the echoed input


@SETTINGS
@given(case=estimator_args(), inputs=INPUTS)
def test_random_estimators_validate_or_name_the_field(case, inputs):
    framework, kwargs = case
    try:
        est = framework(**kwargs)
    except ValidationError as err:
        assert names_a_field(err, set(kwargs) | {"framework_version", "role"}), str(err)
        return
    try:
        request = est.training_job_request("hypo-job-1", inputs=inputs)
    except ValueError as err:
        assert "inputs" in str(err), str(err)
        return
    botocore.validate.validate_parameters(request, SHAPE)
    assert request["ResourceConfig"]["InstanceType"] == kwargs["instance_type"]


@settings(max_examples=1000, deadline=None, database=None)
@given(params=smp_values)
def test_random_smp_parameters_validate_or_name_the_key(params):
    try:
        p = SMPParameters.model_validate(params)
    except ValidationError as err:
        assert names_a_field(err, set(params)), str(err)
        return
    assert p.pipeline_parallel_degree >= 1 and (p.auto_partition or p.default_partition is not None)
