"""How a job ends: Failed, MaxRuntimeExceeded, Ctrl-C while waiting; and following its logs."""

from __future__ import annotations

import time

import boto3
import pytest

from sagelaunch.launcher.sagemaker.logs import JobLogTail
from sagelaunch.launcher.sagemaker.backend import SageMakerTrainingJob, submit
from sagelaunch.launcher.common.jobs import JobFailedError
from tests.fixtures.sagemaker_fakes import Step
from tests.sagemaker.jobspecs import make_source, make_spec

pytestmark = pytest.mark.timeout(90)  # a wait that never ends must fail, not hang

TRACEBACK = (("algo-1", "Traceback (most recent call last):"), ("algo-1", "RuntimeError: CUDA out of memory"))


@pytest.mark.parametrize("stream_logs", [True, False])
def test_failed_job_raises_with_reason_and_last_log_lines(sagemaker_env, tmp_path, stream_logs):
    base = f"fails-{int(stream_logs)}"
    sagemaker_env.plan(
        base,
        Step("InProgress", "Training", "Training", logs=(("algo-2", "step 1"),) + TRACEBACK),
        Step("Failed", "Failed", "Training job failed",
             failure_reason="AlgorithmError: ExecuteUserScriptError: exit code 1"),
    )
    spec = make_spec(base, make_source(tmp_path / "src"))
    with pytest.raises(JobFailedError) as info:
        submit(spec, wait=True, logs=stream_logs)
    error = info.value
    assert (error.job_name, error.status) == (spec.job_name, "Failed")
    assert error.reason == "AlgorithmError: ExecuteUserScriptError: exit code 1"
    assert error.last_logs[-2:] == ["[algo-1] Traceback (most recent call last):", "[algo-1] RuntimeError: CUDA out of memory"]
    assert "CUDA out of memory" in str(error) and "ExecuteUserScriptError" in str(error)


def test_max_runtime_exceeded_is_reported_as_such(sagemaker_env, tmp_path):
    sagemaker_env.plan("too-long", Step("InProgress", "Training", "Training"),
                       Step("Stopped", "MaxRuntimeExceeded", "Job stopped: it exceeded MaxRuntimeInSeconds"))
    with pytest.raises(JobFailedError) as info:
        submit(make_spec("too-long", make_source(tmp_path / "src"), max_run=600), logs=False)
    assert info.value.status == "MaxRuntimeExceeded"
    assert "max_run" in info.value.reason


@pytest.mark.parametrize("stop_on_interrupt", [False, True])
def test_ctrl_c_while_waiting(sagemaker_env, tmp_path, capsys, stop_on_interrupt, terminal_ctrl_c):
    fakes = sagemaker_env
    base = f"ctrl-c-{int(stop_on_interrupt)}"
    fakes.plan(base, Step("InProgress", "Starting", "Preparing"),
               Step("InProgress", "Training", "Training", interrupt=True))  # SIGINT to this thread
    spec = make_spec(base, make_source(tmp_path / "src"), profiler=None)
    with pytest.raises(KeyboardInterrupt) as info:
        submit(spec, wait=True, logs=True, stop_on_interrupt=stop_on_interrupt)
    out = capsys.readouterr().out
    assert info.value.training_job.name == spec.job_name
    job = SageMakerTrainingJob(spec.job_name)
    if stop_on_interrupt:
        assert len(fakes.proxy.calls("StopTrainingJob")) == 1
        assert "stopping training job" in out
        assert job.status in ("Stopping", "Stopped")
    else:
        assert fakes.proxy.calls("StopTrainingJob") == []
        assert f"sagelaunch jobs logs {spec.job_name}" in out and "keeps running" in out
        assert job.status == "InProgress"


def test_logs_follow_merges_hosts_until_the_job_ends(sagemaker_env, tmp_path):
    sagemaker_env.plan(
        "follow",
        Step("InProgress", "Starting", "Preparing"),
        Step("InProgress", "Training", "Training", logs=(("algo-1", "a1"), ("algo-2", "b1"))),
        Step("InProgress", "Training", "Training", logs=(("algo-2", "b2"), ("algo-1", "a2"))),
        Step("Completed", "Completed", "done", logs=(("algo-1", "a3"),)),
    )
    spec = make_spec("follow", make_source(tmp_path / "src"))
    job = submit(spec, wait=False)
    assert list(job.logs(follow=True)) == ["[algo-1] a1", "[algo-2] b1", "[algo-2] b2", "[algo-1] a2", "[algo-1] a3"]
    assert job.status == "Completed"
    assert list(job.logs()) == ["[algo-1] a1", "[algo-2] b1", "[algo-2] b2", "[algo-1] a2", "[algo-1] a3"]


def test_log_tail_reads_events_written_to_cloudwatch(sagemaker_env):
    """Events put with the CloudWatch API: merged by timestamp across streams, one host prefix per line."""
    logs = boto3.client("logs", region_name="us-west-2")
    group = "/aws/sagemaker/TrainingJobs"
    try:
        logs.create_log_group(logGroupName=group)
    except logs.exceptions.ResourceAlreadyExistsException:
        pass
    name = "cw-written-2026-01-01-00-00-00-000"
    events = {
        f"{name}/algo-1-1700000000": [(1000, "one"), (3000, "three\nthree, second line")],
        f"{name}/algo-2-1700000000": [(2000, "two"), (4000, "four")],
        f"{name}-other/algo-1-1700000000": [(2500, "another job")],  # a longer job name sharing the prefix
    }
    base_ms = int(time.time() * 1000) - 60_000  # CloudWatch drops events older than 14 days
    for stream, items in events.items():
        logs.create_log_stream(logGroupName=group, logStreamName=stream)
        logs.put_log_events(logGroupName=group, logStreamName=stream,
                            logEvents=[{"timestamp": base_ms + t, "message": m} for t, m in items])
    tail = JobLogTail(name, "us-west-2")
    assert tail.poll() == ["[algo-1] one", "[algo-2] two", "[algo-1] three", "[algo-1] three, second line",
                           "[algo-2] four"]
    assert tail.poll() == []  # nothing new
    logs.put_log_events(logGroupName=group, logStreamName=f"{name}/algo-2-1700000000",
                        logEvents=[{"timestamp": base_ms + 5000, "message": "five"}])
    assert tail.poll() == ["[algo-2] five"]
    assert JobLogTail("never-logged-job", "us-west-2").poll() == []
