"""One compiled request for both backends: the local backend lays a job out from the CreateTrainingJob request
SageMaker would get, its registry record is that request plus status, and its supervisor's plan is a typed,
versioned record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from sagelaunch.jobspec.spec import InputChannel, ProfilerSettings
from sagelaunch.launcher.local import registry
from sagelaunch.launcher.backends import submit
from sagelaunch.launcher.local.host_layout import HostLayout
from sagelaunch.launcher.local.plan_model import PLAN_FILE, load_plan
from sagelaunch.launcher.common.request import compile_create_training_job_request
from tests.local.conftest import local_job, make_spec, unique

S3_DATA = InputChannel(name="train", uri="s3://data-bucket/train", distribution="ShardedByS3Key")


def test_the_local_request_is_the_sagemaker_request_with_the_code_and_output_made_local(tmp_path):
    spec = make_spec(hyperparameters={"epochs": 2}, inputs=(S3_DATA,), environment={"MODE": "test"},
                     profiler=ProfilerSettings(system_monitor_interval_millis=500), tags=(("team", "a"),))
    sent = compile_create_training_job_request(spec)
    job = local_job(spec, tmp_path / spec.job_name)
    here = job.request
    code_dir = str(HostLayout(tmp_path / spec.job_name / "algo-1").code_dir)
    artifacts = str(tmp_path / spec.job_name / "artifacts")
    # the only differences: where the code is (the first host's copy) and where output goes (the job's artifacts)
    assert json.loads(here["HyperParameters"].pop("sagemaker_submit_directory")) == code_dir
    assert json.loads(sent["HyperParameters"].pop("sagemaker_submit_directory")).startswith("s3://")
    assert here["OutputDataConfig"] == {"S3OutputPath": artifacts}
    assert here["ProfilerConfig"] == {**sent["ProfilerConfig"], "S3OutputPath": artifacts}
    rest = {k for k in sent if k not in ("OutputDataConfig", "ProfilerConfig")}
    assert {k: here[k] for k in rest} == {k: sent[k] for k in rest} and set(here) == set(sent)


def test_the_local_request_passes_botocores_validation_as_every_request_does(tmp_path):
    import botocore.session
    import botocore.validate

    shape = botocore.session.get_session().get_service_model("sagemaker").operation_model("CreateTrainingJob").input_shape
    spec = make_spec(inputs=(InputChannel(name="train", uri=f"file://{tmp_path}", content_type="text/csv"),),
                     checkpoint_local_path=str(tmp_path / "ckpt"), profiler=ProfilerSettings())
    request = local_job(spec, tmp_path / spec.job_name).request
    botocore.validate.validate_parameters(request, shape)  # raises ParamValidationError
    assert request["InputDataConfig"][0]["DataSource"] == {"S3DataSource": {  # a local folder: its URI as given
        "S3DataType": "S3Prefix", "S3Uri": f"file://{tmp_path}", "S3DataDistributionType": "FullyReplicated"}}


def test_a_plan_of_another_version_or_shape_is_refused_by_name(tmp_path):
    (tmp_path / PLAN_FILE).write_text(json.dumps({"version": 2, "job_name": "j"}))
    with pytest.raises(ValueError, match=r"plan version 2 cannot be run by this sagelaunch, which reads plan version 1"):
        load_plan(tmp_path)
    (tmp_path / PLAN_FILE).write_text(json.dumps({"job_name": "j"}))  # written before plans had versions
    with pytest.raises(ValueError, match=r"plan version None cannot be run"):
        load_plan(tmp_path)
    (tmp_path / PLAN_FILE).write_text(json.dumps({"version": 1, "job_name": "j", "hosts": "algo-1"}))
    with pytest.raises(ValueError, match=r"not a plan this sagelaunch can run \(job_dir: Field required.*hosts: "):
        load_plan(tmp_path)


def test_a_plan_this_release_cannot_run_fails_its_job_with_the_reason(tmp_path):
    from sagelaunch.launcher.local import supervisor
    from sagelaunch.launcher.local.record import first_record

    name = unique("old-plan")
    job = local_job(make_spec(job_name=name), registry.job_dir(name))  # the job folder is named after the job
    registry.create(first_record(job.request, job.facts.region, job.facts.job_dir, registry.now()))
    job.facts.job_dir.mkdir(parents=True)
    (job.facts.job_dir / PLAN_FILE).write_text(json.dumps({"version": 0, "job_name": job.name}))
    with pytest.raises(ValueError, match="plan version 0 cannot be run"):
        supervisor.main([str(job.facts.job_dir)])
    record = registry.get(job.name)
    assert record["TrainingJobStatus"] == "Failed"
    assert record["FailureReason"].startswith(f"ClientError: {job.facts.job_dir / PLAN_FILE}: plan version 0 cannot")


def test_the_registry_refuses_a_record_that_is_not_a_local_jobs(tmp_path):
    now = registry.now()
    record = {"TrainingJobName": unique("bad"), "TrainingJobStatus": "Running", "CreationTime": now, "JobDir": "/x"}
    with pytest.raises(ValidationError, match=r"TrainingJobStatus\n  Input should be 'InProgress', 'Completed'"):
        registry.create(record)
    without_folder = {k: v for k, v in record.items() if k != "JobDir"} | {"TrainingJobStatus": "InProgress"}
    with pytest.raises(ValidationError, match=r"JobDir\n  Field required"):
        registry.create(without_folder)
    assert not registry.exists(record["TrainingJobName"])


@pytest.mark.slow  # a real local job: watchdog, supervisor, torchrun
def test_the_job_is_laid_out_from_its_request_and_recorded_as_it(tmp_path):
    data = tmp_path / "train"
    data.mkdir()
    (data / "part-0.csv").write_text("1,2\n")
    spec = make_spec(hyperparameters={"epochs": 2}, inputs=(InputChannel(name="train", uri=str(data)),),
                     profiler=ProfilerSettings(system_monitor_interval_millis=500))
    job = submit(spec, wait=True, logs=False)
    record = job.describe()
    job_dir = Path(record["JobDir"])
    request = local_job(spec, job_dir).request  # what submit compiled (pure: the same spec gives the same request)
    assert {k: record[k] for k in request} == request
    assert record["TrainingJobStatus"] == "Completed" and record["JobDir"] == str(job_dir)
    config = HostLayout(job_dir / "algo-1").config_dir
    assert json.loads((config / "hyperparameters.json").read_text()) == request["HyperParameters"]
    assert json.loads((config / "inputdataconfig.json").read_text()) == {
        "train": {"RecordWrapperType": "None", "S3DistributionType": "FullyReplicated", "TrainingInputMode": "File"}}
    assert json.loads((config / "profilerconfig.json").read_text())["ProfilingIntervalInMilliseconds"] == 500
    plan = load_plan(job_dir)
    assert plan.version == 1 and plan.job_name == spec.job_name and plan.max_run == spec.stopping.max_run
    assert [h.host for h in plan.hosts] == ["algo-1"] and plan.hosts[0].monitor is not None
