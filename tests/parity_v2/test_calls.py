"""The calls a v2 user makes besides the constructor, one by one on the real SDK v2 and on ours (one moto server):
hyperparameters(), set_hyperparameters(), training_image_uri(), model_data, latest_training_job.name/.job_name,
logs(), attach(), a failed job's description after fit(), the profiler updates (UpdateTrainingJob) and
TensorFlow's positional order."""

from __future__ import annotations

import json

import pytest

from tests.fixtures.sagemaker_fakes import Step
from tests.fixtures.sdk_v2 import FULL_TAG, requests, without_documented_differences

SETUP = """
import contextlib, io, os, tempfile
src = tempfile.mkdtemp()
open(os.path.join(src, "train.py"), "w").write("print('hi')\\n")
from sagemaker.pytorch import PyTorch
from sagemaker.tensorflow import TensorFlow
COMMON = dict(role=ROLE, instance_type="ml.g5.xlarge", instance_count=1)

def python_type(err):  # the built-in type a caller catches (sagelaunch's own classes derive from it)
    builtin = [c for c in type(err).__mro__ if c.__module__ == "builtins" and c not in (Exception, BaseException)]
    return "TypeError" if TypeError in builtin else builtin[0].__name__

def printed(call):
    out, error = io.StringIO(), None
    with contextlib.redirect_stdout(out):
        try:
            call()
        except Exception as err:
            error = python_type(err) + ": " + str(err)
    return out.getvalue(), error

def raised(call):
    try:
        call()
    except Exception as err:
        return python_type(err)
    return None
"""
PT = 'PyTorch(entry_point="train.py", source_dir=src, framework_version="2.0.0", py_version="py310", {}**COMMON)'

CASES = {
    # hyperparameters() before and after fit, training_image_uri(), the job's names
    "calls-hp": PT.format('hyperparameters={"epochs": 2, "lr": 0.1, "name": "x"}, '
                          'distribution={"torch_distributed": {"enabled": True}}, ') + """
before = est.hyperparameters()
est.fit(wait=False, job_name=JOB)
RESULT = {"before": before, "after": est.hyperparameters(), "image": est.training_image_uri(),
          "name": est.latest_training_job.name, "job_name": est.latest_training_job.job_name}
""",
    # set_hyperparameters before fit: the request (v2 encodes the values twice: a documented difference)
    "calls-set-hp": PT.format('hyperparameters={"epochs": 2}, ') + """
est.set_hyperparameters(lr=0.5, name="x")
est.fit(wait=False, job_name=JOB)
""",
    # TensorFlow(py_version, framework_version, model_dir, image_uri, distribution) by position
    "calls-tf-positional": """
est = TensorFlow("py310", "2.12.0", False, None, None, entry_point="train.py", source_dir=src,
                 hyperparameters={"epochs": 1}, **COMMON)
before = est.hyperparameters()
est.fit(wait=False, job_name=JOB)
RESULT = {"before": before, "after": est.hyperparameters(), "image": est.training_image_uri()}
""",
    # PyTorch's seven positions
    "calls-pt-positional": """
est = PyTorch("train.py", "2.0.0", "py310", src, {"epochs": 3}, None, {"torch_distributed": {"enabled": True}},
              **COMMON)
est.fit(wait=False, job_name=JOB)
""",
    # model_data and logs() of a finished job (its log line written when it starts)
    "calls-logs": PT.format("") + """
est.fit(wait=False, job_name=JOB)
out, error = printed(est.logs)
RESULT = {"model_data": est.model_data, "logged": "epoch 1 loss 0.25" in out, "error": error}
""",
    # attach: an estimator rebuilt from DescribeTrainingJob
    "calls-attach": PT.format('hyperparameters={"epochs": 2, "lr": 0.1}, base_job_name="attach-me", '
                              'tags=[{"Key": "team", "Value": "ml"}], ') + """
est.fit(wait=False, job_name=JOB)
att = PyTorch.attach(JOB)
RESULT = {"hp": att.hyperparameters(), "image": att.training_image_uri(), "model_data": att.model_data,
          "name": att.latest_training_job.name, "entry_point": att.entry_point, "source_dir": att.source_dir,
          "instance_type": att.instance_type, "instance_count": att.instance_count, "role": att.role,
          "max_run": att.max_run, "volume_size": att.volume_size, "base_job_name": att.base_job_name,
          "framework_version": att.framework_version, "py_version": att.py_version, "tags": att.tags,
          "wrong_framework": raised(lambda: TensorFlow.attach(JOB))}
""",
    "calls-attach-tf": """
est = TensorFlow("py310", "2.12.0", False, entry_point="train.py", source_dir=src, hyperparameters={"a": 1}, **COMMON)
est.fit(wait=False, job_name=JOB)
att = TensorFlow.attach(JOB)
RESULT = {"hp": att.hyperparameters(), "image": att.training_image_uri(), "model_data": att.model_data,
          "framework_version": att.framework_version, "py_version": att.py_version}
""",
    # a failed job: fit raises, latest_training_job still describes it; logs() prints, then raises
    "calls-failed": PT.format("") + """
fit_error = raised(lambda: est.fit(job_name=JOB))
description = est.latest_training_job.describe()
out, error = printed(est.logs)
RESULT = {"fit_raised": fit_error is not None, "status": description["TrainingJobStatus"],
          "reason": description.get("FailureReason"), "logged": "Traceback: boom" in out,
          "logs_raised": error is not None and "AlgorithmError: boom" in error}
""",
    # the profiler updates of a running job, started with profiling disabled
    "calls-profiling": PT.format("disable_profiler=True, ") + """
est.fit(wait=False, job_name=JOB)
est.enable_default_profiling()
again = raised(est.enable_default_profiling)
est.update_profiler(system_monitor_interval_millis=500)
est.update_profiler(s3_output_path="s3://my-bucket/profiles", system_monitor_interval_millis=1000)
est.update_profiler(disable_framework_metrics=True)
from sagemaker.debugger import ProfilerRule, rule_configs
est.update_profiler(rules=[ProfilerRule.sagemaker(rule_configs.ProfilerReport()),
                           ProfilerRule.sagemaker(rule_configs.LowGPUUtilization(threshold_p95=80))],
                    system_monitor_interval_millis=500)
nothing = raised(est.update_profiler)
est.disable_profiling()
RESULT = {"again": again is not None, "nothing": nothing is not None,
          "disabled_twice": raised(est.disable_profiling) is not None}
""",
}


def _plan_jobs(fakes) -> None:
    """Jobs of these cases (both sides: <case>-v2, <case>-sl) move as planned, one step per DescribeTrainingJob."""
    fakes.plan("calls-logs", Step("InProgress", "Training", logs=(("algo-1", "epoch 1 loss 0.25"),)),
               Step("Completed", "Completed"))
    fakes.plan("calls-failed", Step("InProgress", "Training", logs=(("algo-1", "Traceback: boom"),)),
               Step("Failed", "Failed", failure_reason="AlgorithmError: boom"))
    fakes.plan("calls-profiling", Step("InProgress", "Starting"), Step("InProgress", "Training"))


def _named(result: dict) -> dict:
    """RESULT with the side's job name as <job>."""
    return json.loads(json.dumps(result["result"]).replace(result["job"], "<job>"))


@pytest.fixture(scope="module")
def side(sdk_v2, sagemaker_fakes):
    _plan_jobs(sagemaker_fakes)
    return sdk_v2([{"id": case_id, "code": SETUP + ("est = " + code if code.startswith("PyTorch(") else code)}
                   for case_id, code in CASES.items()])


def _case(side, case_id: str) -> tuple[dict, dict]:
    v2, ours = side.v2[case_id], side.ours[case_id]
    assert v2["error"] is None, f"SDK v2 failed {case_id}: {v2['error']}"
    assert ours["error"] is None, f"ours failed {case_id}: {ours['error']}"
    return v2, ours


def _moving_tag(ours_image: str, v2_image: str) -> str:
    """Our full DLC tag for v2's moving tag (the documented difference), else ours unchanged."""
    match = FULL_TAG.match(ours_image)
    return v2_image if match and match.group("moving") == v2_image else ours_image


def _create_request_pair(side, case_id: str, set_hyperparameters: tuple[str, ...] = ()) -> tuple[dict, dict]:
    v2, ours = _case(side, case_id)
    [v2_request], [our_request] = requests(v2, "CreateTrainingJob"), requests(ours, "CreateTrainingJob")
    our_request, v2_request = without_documented_differences(our_request, v2_request, set_hyperparameters)
    # the default monitoring ProfilerConfig and DebugHookConfig are compared in the request grid's tests
    for key in ("ProfilerConfig", "DebugHookConfig"):
        v2_request.pop(key, None), our_request.pop(key, None)
    return our_request, v2_request


def test_hyperparameters_training_image_uri_and_job_names(side):
    v2, ours = (_named(r) for r in _case(side, "calls-hp"))
    assert ours["before"] == v2["before"]  # JSON-encoded, with the distribution's entries, before fit
    assert ours["after"] == v2["after"]  # after fit, the sagemaker_* entries the job was sent as well
    assert ours["after"]["sagemaker_job_name"] == '"<job>"'
    assert _moving_tag(ours.pop("image"), v2["image"]) == v2.pop("image")
    assert ours == v2 and ours["name"] == ours["job_name"] == "<job>"


def test_set_hyperparameters_sends_the_values_once(side):
    our_request, v2_request = _create_request_pair(side, "calls-set-hp", set_hyperparameters=("lr", "name"))
    assert our_request == v2_request
    assert our_request["HyperParameters"]["lr"] == "0.5" and our_request["HyperParameters"]["name"] == '"x"'


def test_positional_arguments_as_v2(side):
    for case_id in ("calls-tf-positional", "calls-pt-positional"):
        our_request, v2_request = _create_request_pair(side, case_id)
        assert our_request == v2_request, case_id
    v2, ours = (_named(r) for r in _case(side, "calls-tf-positional"))
    assert _moving_tag(ours.pop("image"), v2["image"]) == v2.pop("image")
    assert ours == v2 and "model_dir" not in ours["after"]  # model_dir=False by position: not sent


def test_model_data_and_logs_of_a_finished_job(side):
    v2, ours = (_named(r) for r in _case(side, "calls-logs"))
    assert ours == v2 == {"model_data": "s3://sagemaker-us-west-2-123456789012/<job>/output/model.tar.gz",
                          "logged": True, "error": None}


@pytest.mark.parametrize("case_id", ["calls-attach", "calls-attach-tf"])
def test_attach_rebuilds_the_estimator(side, case_id):
    v2, ours = (_named(r) for r in _case(side, case_id))
    assert _moving_tag(ours.pop("image"), v2["image"]) == v2.pop("image")
    if case_id == "calls-attach-tf":
        # v2's attach forgets model_dir=False and reports its default model_dir, which the job was never sent;
        # ours reports what the job was sent
        assert v2["hp"].pop("model_dir") == '"s3://sagemaker-us-west-2-123456789012/<job>/model"'
        assert "model_dir" not in ours["hp"]
    assert ours == v2
    assert ours["model_data"] == "s3://sagemaker-us-west-2-123456789012/<job>/output/model.tar.gz"
    if case_id == "calls-attach":
        assert ours["tags"] == [{"Key": "team", "Value": "ml"}]


def test_a_failed_job_stays_reachable_after_fit(side):
    v2, ours = (_named(r) for r in _case(side, "calls-failed"))
    assert ours == v2 == {"fit_raised": True, "status": "Failed", "reason": "AlgorithmError: boom", "logged": True,
                          "logs_raised": True}


def test_profiler_updates_send_v2s_update_training_job(side, sagemaker_fakes):
    v2, ours = _case(side, "calls-profiling")
    assert _named(ours) == _named(v2) == {"again": True, "nothing": True, "disabled_twice": True}
    our_updates, v2_updates = requests(ours, "UpdateTrainingJob"), requests(v2, "UpdateTrainingJob")
    assert our_updates == v2_updates
    assert [u["ProfilerConfig"] for u in our_updates] == [
        {"S3OutputPath": "s3://sagemaker-us-west-2-123456789012/", "DisableProfiler": False},
        {"DisableProfiler": False, "ProfilingIntervalInMilliseconds": 500},
        {"S3OutputPath": "s3://my-bucket/profiles", "DisableProfiler": False, "ProfilingIntervalInMilliseconds": 1000},
        {"DisableProfiler": False, "ProfilingParameters": {}},
        {"DisableProfiler": False, "ProfilingIntervalInMilliseconds": 500},
        {"DisableProfiler": True},
    ]
    # rules added to the running job: built-in profiler rules on the region's evaluator image
    [with_rules] = [u for u in our_updates if "ProfilerRuleConfigurations" in u]
    assert [r["RuleConfigurationName"] for r in with_rules["ProfilerRuleConfigurations"]] == [
        "ProfilerReport", "LowGPUUtilization"]
    assert with_rules["ProfilerRuleConfigurations"][1]["RuleParameters"]["threshold_p95"] == "80"
    # the fakes applied each side's six updates
    for result in (ours, v2):
        assert [u["TrainingJobName"] for u in sagemaker_fakes.updates].count(result["job"]) == 6
