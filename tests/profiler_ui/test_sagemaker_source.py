"""SageMaker jobs' S3 profiler outputs in the profile browser, against the shared moto server."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.profiler_ui.conftest import serve_profile_browser, trace
from tests.profiler_ui.test_server_api import get_json, post_json, wait_loaded


@pytest.fixture(scope="module")
def sagemaker_jobs(moto_server, sagemaker_fakes, profile_home):
    import boto3

    from tests.fixtures.sagemaker_fakes import Step

    suffix = uuid.uuid4().hex[:8]
    bucket = f"profui-{suffix}"
    sagemaker_fakes.plan("profui-sm-", Step("Completed", "Completed", "Training job completed"))
    s3 = boto3.client("s3")
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    sm = boto3.client("sagemaker")
    jobs = {"profiled": f"profui-sm-alexnet-{suffix}", "unprofiled": f"profui-sm-plain-{suffix}",
            "empty": f"profui-sm-empty-{suffix}"}
    for key, name in jobs.items():
        request = dict(
            TrainingJobName=name,
            AlgorithmSpecification={"TrainingImage": "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.1.0-gpu-py310",
                                    "TrainingInputMode": "File"},
            RoleArn="arn:aws:iam::123456789012:role/SageMakerRole",
            OutputDataConfig={"S3OutputPath": f"s3://{bucket}/output"},
            ResourceConfig={"InstanceType": "ml.p3.2xlarge", "InstanceCount": 1, "VolumeSizeInGB": 30},
            StoppingCondition={"MaxRuntimeInSeconds": 3600},
        )
        if key != "unprofiled":
            request["ProfilerConfig"] = {"S3OutputPath": f"s3://{bucket}/profiles", "ProfilingIntervalInMilliseconds": 500}
        sm.create_training_job(**request)
    prefix = f"profiles/{jobs['profiled']}/profiler-output/"
    s3.upload_file(str(trace("alexnet.pt.trace.json.gz")), bucket, prefix + "algo-1/alexnet.pt.trace.json.gz")
    # a key that would climb out of a download folder: listed by S3, never downloaded
    s3.put_object(Bucket=bucket, Key=prefix + "algo-1/../../../escape.json", Body=b'{"traceEvents": []}')
    return jobs


@pytest.fixture(scope="module")
def aws_ui_server(sagemaker_jobs):
    with serve_profile_browser(include_sagemaker=True) as server:
        yield server


def test_lists_profiled_sagemaker_jobs_and_loads_from_s3(aws_ui_server, sagemaker_jobs):
    status, data = get_json(aws_ui_server, "/api/jobs?q=profui-sm-&refresh=1")
    assert status == 200 and data["sources"]["sagemaker"] == "ok", data["sources"]
    by_name = {j["name"]: j for j in data["jobs"]}
    profiled = by_name[sagemaker_jobs["profiled"]]
    assert profiled["source"] == "sagemaker" and profiled["has_profile"] and profiled["status"] == "Completed"
    assert profiled["location"].endswith(f"/profiles/{sagemaker_jobs['profiled']}/profiler-output/")
    assert sagemaker_jobs["unprofiled"] not in by_name, "a job without ProfilerConfig has no profile to list"
    assert not by_name[sagemaker_jobs["empty"]]["has_profile"]
    status, data = get_json(aws_ui_server, "/api/jobs?q=resnet")
    assert [j["source"] for j in data["jobs"]] == ["local"], "local jobs are listed alongside"

    status, data = post_json(aws_ui_server, "/api/load", {"name": sagemaker_jobs["empty"], "source": "sagemaker"})
    assert status == 404
    status, data = post_json(aws_ui_server, "/api/load", {"name": sagemaker_jobs["profiled"], "source": "local"})
    assert status == 404, "names are looked up in the chosen source only"
    status, _ = post_json(aws_ui_server, "/api/load", {"name": sagemaker_jobs["profiled"], "source": "sagemaker"})
    assert status == 202
    done = wait_loaded(aws_ui_server)
    assert done["state"] == "loaded", done
    messages = [m for _, m in aws_ui_server.session.history]
    assert any(m.startswith("downloading algo-1/alexnet.pt.trace.json.gz") for m in messages)
    tmp = Path(aws_ui_server.session._tmp)
    assert [p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file()] == ["algo-1/alexnet.pt.trace.json.gz"]
    assert not (tmp.parent / "escape.json").exists()
    _, dash = get_json(aws_ui_server, "/api/dashboard")
    assert dash["sections"]["kernels"]["count"] and "missing" not in dash["sections"]["gpu_active"]
    post_json(aws_ui_server, "/api/unload", {})
    assert not tmp.exists(), "unloading deletes the downloaded copy"


@pytest.mark.browser
def test_browser_loads_a_sagemaker_job(page, aws_ui_server, sagemaker_jobs, artifacts_dir):
    from tests.profiler_ui.test_browser_ui import load_job, open_ui, search

    open_ui(page, aws_ui_server)
    load_job(page, sagemaker_jobs["profiled"])
    page.wait_for_selector('#dashboard[data-ready="1"]', timeout=60_000)
    assert page.locator("#chart-kernel-time-top .main-svg").count() >= 1
    page.goto(aws_ui_server.url + "#/jobs")
    search(page, name="profui")
    sources = page.locator("#jobs-table tbody tr").evaluate_all("rows => rows.map(r => r.dataset.source)")
    assert {"local", "sagemaker"} <= set(sources)
    assert "SageMaker: ok" in page.inner_text("#sources")
    page.screenshot(path=str(artifacts_dir / "profile-ui-jobs-sagemaker.png"))
    page.click("#unload")
    page.wait_for_selector('body[data-state="empty"]')
    assert page.console_errors == []
