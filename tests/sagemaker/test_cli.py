"""`sagelaunch fit JOB.yaml` and `sagelaunch jobs …` for SageMaker and local jobs (Typer CliRunner)."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
import typer
from typer.testing import CliRunner

from sagelaunch.launcher.local import registry
from sagelaunch import cli_fit, cli_jobs
from sagelaunch.launcher.sagemaker.backend import submit
from tests.fixtures.sagemaker_fakes import Step
from tests.sagemaker.jobspecs import make_source, make_spec

pytestmark = pytest.mark.timeout(90)  # a wait that never ends must fail, not hang


@pytest.fixture
def cli():
    app = typer.Typer()
    cli_fit.register(app)
    cli_jobs.register(app)
    runner = CliRunner()
    return lambda *args: runner.invoke(app, list(args), catch_exceptions=False)


def _local_job(tmp_path, name: str, status: str = "Completed") -> None:
    job_dir = registry.job_dir(name)
    (job_dir / "logs").mkdir(parents=True)
    (job_dir / "logs" / "job.log").write_text("[algo-1 rank0] local line 1\n[algo-1 rank0] local line 2\n")
    now = datetime.now(timezone.utc)
    registry.create({"TrainingJobName": name, "TrainingJobStatus": status, "SecondaryStatus": status,
                     "CreationTime": now, "LastModifiedTime": now, "JobDir": str(job_dir),
                     "SecondaryStatusTransitions": []})


def test_jobs_commands_cover_local_and_sagemaker_jobs(sagemaker_env, tmp_path, cli):
    sagemaker_env.plan("cli-running", Step("InProgress", "Training", "Training",
                                           logs=(("algo-1", "remote a"), ("algo-2", "remote b"))))
    spec = make_spec("cli-running", make_source(tmp_path / "src"), profiler=None)
    submit(spec, wait=False)
    _local_job(tmp_path, "local-done-1")

    listed = cli("jobs", "list", "--json")
    assert listed.exit_code == 0, listed.output
    rows = {row["Name"]: row for row in json.loads(listed.output)}
    assert rows["local-done-1"]["Backend"] == "local" and rows["local-done-1"]["Status"] == "Completed"
    assert rows[spec.job_name]["Backend"] == "sagemaker" and rows[spec.job_name]["Status"] == "InProgress"

    only_running = json.loads(cli("jobs", "list", "--status", "InProgress", "--json").output)
    assert spec.job_name in [r["Name"] for r in only_running] and "local-done-1" not in [r["Name"] for r in only_running]
    table = cli("jobs", "list", "--backend", "local")
    assert "local-done-1" in table.output and spec.job_name not in table.output

    described = json.loads(cli("jobs", "describe", spec.job_name).output)
    assert described["TrainingJobName"] == spec.job_name and described["TrainingJobStatus"] == "InProgress"
    assert json.loads(cli("jobs", "describe", "local-done-1").output)["TrainingJobStatus"] == "Completed"

    assert cli("jobs", "logs", spec.job_name).output.splitlines() == ["[algo-1] remote a", "[algo-2] remote b"]
    assert "local line 2" in cli("jobs", "logs", "local-done-1").output

    stopped = cli("jobs", "stop", spec.job_name)
    assert stopped.exit_code == 0 and f"Stopping {spec.job_name}" in stopped.output
    assert [c.json() for c in sagemaker_env.proxy.calls("StopTrainingJob")] == [{"TrainingJobName": spec.job_name}]
    follow = cli("jobs", "logs", spec.job_name, "--follow")  # ends once the job is Stopped
    assert follow.exit_code == 0
    assert json.loads(cli("jobs", "describe", spec.job_name).output)["TrainingJobStatus"] == "Stopped"


def test_every_command_has_help(cli):
    for args in (["fit"], ["jobs"], ["jobs", "list"], ["jobs", "describe"], ["jobs", "logs"], ["jobs", "stop"]):
        shown = cli(*args, "--help")
        assert shown.exit_code == 0 and "Usage" in shown.output, args
    assert "--follow" in cli("jobs", "logs", "--help").output
    assert "--no-wait" in cli("fit", "--help").output


def test_jobs_errors_are_one_clear_line(sagemaker_env, cli):
    missing = cli("jobs", "describe", "no-such-job-anywhere")
    assert missing.exit_code == 1
    assert "no training job named 'no-such-job-anywhere'" in missing.output and "Traceback" not in missing.output
    typo = cli("jobs", "list", "--status", "Complete")
    assert typo.exit_code == 1 and "Did you mean 'Completed'?" in typo.output
    again = cli("jobs", "stop", "no-such-job-anywhere")
    assert again.exit_code == 1 and "Fix:" in again.output


def test_fit_job_file(sagemaker_env, tmp_path, cli):
    make_source(tmp_path / "src")
    (tmp_path / "job.yaml").write_text(
        "framework: pytorch\n"
        "entry_point: train.py\n"
        "source_dir: src\n"
        "role: arn:aws:iam::123456789012:role/SageMakerRole\n"
        "framework_version: '2.0.0'\n"
        "py_version: py310\n"
        "instance_type: ml.p3.2xlarge\n"
        "region: us-west-2\n"
        "ignore_patterns: ['*.bin']\n"
        "hyperparameters: {epochs: 2}\n"
        "job_name: cli-fit-2026-01-01-00-00-00-000\n"
    )
    started = cli("fit", str(tmp_path / "job.yaml"), "--no-wait")
    assert started.exit_code == 0, started.output
    assert "sagelaunch jobs logs cli-fit-2026-01-01-00-00-00-000 --follow" in started.output
    (create,) = sagemaker_env.proxy.calls("CreateTrainingJob")
    request = create.json()
    assert request["TrainingJobName"] == "cli-fit-2026-01-01-00-00-00-000"
    assert json.loads(request["HyperParameters"]["epochs"]) == 2
    # one DescribeTrainingJob before the upload (is the name free? "not found"), none after: no waiting
    assert [c.status for c in sagemaker_env.proxy.calls("DescribeTrainingJob")] == [400]

    waited = cli("fit", str(tmp_path / "job.yaml"))  # same name again: SageMaker refuses it
    assert waited.exit_code == 1 and "Traceback" not in waited.output
    assert "a training job named 'cli-fit-2026-01-01-00-00-00-000' already exists" in waited.output
    assert "leave job_name unset" in waited.output
    assert len(sagemaker_env.proxy.calls("CreateTrainingJob")) == 1  # the first job's code was not overwritten

    bad = tmp_path / "bad.yaml"
    bad.write_text("framework: pytorch\nentry_point: train.py\nsource_dir: src\ninstance_type: ml.p3.2xlarge\n"
                   "framework_version: '2.0.0'\npy_version: py310\nregion: us-west-2\n")
    no_role = cli("fit", str(bad))
    assert no_role.exit_code == 1 and "role is required" in no_role.output


@pytest.mark.parametrize("where", ["AWS_REGION", "AWS_DEFAULT_REGION", "profile"])
def test_one_region_rule_for_every_command(sagemaker_env, tmp_path, cli, monkeypatch, where):
    """Before: with AWS_REGION alone, `fit` used it but `jobs list/describe/logs/stop` said "no AWS region"."""
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    config = tmp_path / "aws-config"
    config.write_text("[profile work]\nregion = us-west-2\n" if where == "profile" else "")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv(*(("AWS_PROFILE", "work") if where == "profile" else (where, "us-west-2")))
    sagemaker_env.plan(f"cli-region-{where.lower().replace('_', '-')}",
                       Step("InProgress", "Training", "Training", logs=(("algo-1", "hello"),)))
    spec = make_spec(f"cli-region-{where.lower().replace('_', '-')}", make_source(tmp_path / "src"), profiler=None)
    submit(spec, wait=False)

    listed = cli("jobs", "list", "--backend", "sagemaker", "--json")
    assert listed.exit_code == 0, listed.output
    assert spec.job_name in [row["Name"] for row in json.loads(listed.output)]
    described = cli("jobs", "describe", spec.job_name)
    assert described.exit_code == 0 and json.loads(described.output)["TrainingJobName"] == spec.job_name
    assert cli("jobs", "logs", spec.job_name).output.splitlines() == ["[algo-1] hello"]
    stopped = cli("jobs", "stop", spec.job_name)
    assert stopped.exit_code == 0 and f"Stopping {spec.job_name}" in stopped.output
    from sagelaunch.profile_sources import list_sagemaker

    assert list_sagemaker()[1] == "ok", "the profile browser asks SageMaker in the same region"


def test_no_region_anywhere_is_one_line_naming_the_fix(sagemaker_env, tmp_path, cli, monkeypatch):
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_DEFAULT_PROFILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    listed = cli("jobs", "list", "--backend", "sagemaker")
    assert listed.exit_code == 1 and "Traceback" not in listed.output
    assert listed.output.strip() == (
        "error: no AWS region is configured (none of AWS_REGION, AWS_DEFAULT_REGION or a region in the AWS config "
        "file's profile); fix: pass --region us-west-2 (region= in Python) or export AWS_REGION=us-west-2")
    assert cli("jobs", "list", "--backend", "sagemaker", "--region", "us-west-2").exit_code == 0
    from sagelaunch.launcher.common.environment import NO_REGION
    from sagelaunch.profile_sources import list_sagemaker

    assert list_sagemaker() == ([], NO_REGION)
