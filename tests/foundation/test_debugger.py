"""SageMaker Debugger's arguments (rules, hook, TensorBoard, FrameworkProfile) and TensorFlow's model_dir: what is
refused and why, offline. What the requests hold is compared with the real SDK v2 in tests/parity_v2/test_requests."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from sagelaunch.estimators import PyTorch, TensorFlow
from sagelaunch.profiler_config import (DebuggerHookConfig, DetailedProfilingConfig, FrameworkProfile, Profiler, ProfilerConfig, ProfilerRule, Rule,
                             TensorBoardOutputConfig, rule_configs)

ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"


def pt(**kw):
    return PyTorch(**{"entry_point": "train.py", "role": ROLE, "region": "us-west-2", "framework_version": "2.0.0",
                      "instance_type": "ml.g5.xlarge", **kw})


def error_of(fn, **kw) -> str:
    with pytest.raises((ValidationError, ValueError)) as info:
        fn(**kw)
    return str(info.value)


def test_framework_profiling_is_refused_where_sagemaker_stopped_it():
    fp = ProfilerConfig(framework_profile_params=FrameworkProfile(start_step=3))
    msg = error_of(pt, profiler_config=fp)
    assert "framework profiling was discontinued from pytorch 2.0" in msg and "profile_params=Profiler" in msg
    assert "tensorflow 2.12" in error_of(TensorFlow, entry_point="t.py", role=ROLE, region="us-west-2",
                                         framework_version="2.13.0", instance_type="ml.g5.xlarge", profiler_config=fp)
    req = pt(framework_version="1.13.1", profiler_config=fp).training_job_request("fp-job")
    assert json.loads(req["ProfilerConfig"]["ProfilingParameters"]["DetailedProfilingConfig"].replace(", }", "}")) == {
        "StartStep": 3, "NumSteps": 1}
    with pytest.raises(ValidationError, match="cannot both be set"):
        ProfilerConfig(framework_profile_params=FrameworkProfile(), profile_params=Profiler())
    with pytest.raises(ValidationError, match="not both"):
        FrameworkProfile(start_step=1, duration=5)
    with pytest.raises(ValueError, match="DetailedProfilingConfig: per-metric profiling configurations are not supported"):
        DetailedProfilingConfig(start_step=5)


def test_where_debugger_does_not_run_the_profiler_and_hook_are_off_or_refused():
    req = pt(region="eu-central-2").training_job_request("off-region")
    assert req["ProfilerConfig"] == {"DisableProfiler": True} and "DebugHookConfig" not in req
    assert "SageMaker Debugger's profiler does not run in region='eu-central-2'" in error_of(
        pt, region="eu-central-2", profiler_config=ProfilerConfig(system_monitor_interval_millis=500))
    assert "not available in region='eu-central-2'" in error_of(
        pt, region="eu-central-2", rules=[Rule.sagemaker(rule_configs.loss_not_decreasing())])
    assert "a ProfilerRule needs the profiler" in error_of(
        pt, disable_profiler=True, rules=[ProfilerRule.sagemaker(rule_configs.ProfilerReport())])
    assert "no image in region='il-central-1'" in error_of(
        pt, region="il-central-1", rules=[Rule.sagemaker(rule_configs.overfit())])


def test_rule_configs_have_v2s_names_and_checks():
    assert rule_configs.loss_not_decreasing()["DebugRuleConfiguration"]["RuleConfigurationName"] == "LossNotDecreasing"
    with pytest.raises(AttributeError, match="did you mean 'vanishing_gradient'"):
        rule_configs.vanishing_gradiant  # noqa: B018
    assert rule_configs.ProfilerReport(CPUBottleneck_threshold=80).rule_parameters == {
        "CPUBottleneck_threshold": 80, "rule_to_invoke": "ProfilerReport"}
    with pytest.raises(ValueError, match=r"CPUBottleneck\(threshold=200\): allowed: a number from 0 to 100"):
        rule_configs.ProfilerReport(CPUBottleneck_threshold=200)
    with pytest.raises(ValueError, match="keys are <rule>_<parameter>"):
        rule_configs.ProfilerReport(Nope_x=1)
    with pytest.raises(TypeError, match="did you mean 'patience'"):
        rule_configs.BatchSize(patients=3)


def test_rules_and_hook_arguments_are_checked():
    assert "rules[0]='LossNotDecreasing' is not a Rule or ProfilerRule" in error_of(pt, rules=["LossNotDecreasing"])
    with pytest.raises(ValidationError, match="rule actions"):
        Rule.sagemaker(rule_configs.overfit(), actions=object())
    with pytest.raises(ValueError, match="as an s3:// URI"):
        Rule.custom("Mine", "1.dkr.ecr.us-west-2.amazonaws.com/r:1", "ml.m5.xlarge", 10, source="rule.py",
                    rule_to_invoke="Mine")
    with pytest.raises(ValueError, match="give both or neither"):
        ProfilerRule.custom("Mine", "1.dkr.ecr.us-west-2.amazonaws.com/r:1", "ml.m5.xlarge", 10, source="s3://bkt/r.py")
    with pytest.raises(ValidationError, match="not an S3 URI"):
        TensorBoardOutputConfig("/local/tb")
    assert DebuggerHookConfig("s3://bkt/hook").s3_output_path == "s3://bkt/hook"  # v2's positional order


def test_a_local_job_warns_that_debugger_runs_on_sagemaker_only():
    with pytest.warns(UserWarning, match="rules: SageMaker Debugger runs on SageMaker only"):
        est = PyTorch(entry_point="train.py", framework_version="2.0.0", instance_type="local",
                      rules=[Rule.sagemaker(rule_configs.loss_not_decreasing())])
    spec = est.to_spec("local-job")
    observability = spec.observability
    assert observability.profiler is None and observability.debug_hook is None and observability.debug_rules == ()


def test_tensorflow_model_dir_as_v2_sends_it():
    base = dict(entry_point="t.py", role=ROLE, region="us-west-2", framework_version="2.13.0", instance_type="ml.g5.xlarge")

    def model_dir(**kw):
        hp = TensorFlow(**{**base, **kw}).training_job_request("tf-job").get("HyperParameters")
        return json.loads(hp["model_dir"]) if "model_dir" in hp else None

    assert model_dir(output_path="s3://out-bkt/jobs/") == "s3://out-bkt/jobs/tf-job/model"
    assert model_dir(instance_type="ml.p4d.24xlarge", distribution={"mpi": {"enabled": True}}) == "/opt/ml/model"
    assert model_dir(model_dir="s3://models/dir") == "s3://models/dir"
    assert model_dir(model_dir=False) is None
    assert model_dir(instance_type="local", role=None) is None  # a local job saves to SM_MODEL_DIR
    assert "model_dir=True" in error_of(TensorFlow, **base, model_dir=True)
