"""Real torchrun jobs: 1 host × 2 processes and 2 hosts × 1 process (with a gloo all_reduce across hosts)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import boto3
import pytest

from sagelaunch.jobspec.spec import replace
from sagelaunch.launcher.backends import submit
from sagelaunch.launcher.local.backend import LocalTrainingJob
from sagelaunch.launcher.local.logs import rank_lines
from sagelaunch.launcher.backends import attach
from sagelaunch.jobspec.spec import InputChannel
from tests.local.conftest import make_spec, unique

pytestmark = pytest.mark.slow  # local jobs: supervisors, torchrun, ranks


def _reports(job_dir: Path, host: str) -> dict[int, dict]:
    data = job_dir / host / "output" / "data"
    return {int(p.stem[4:]): json.loads(p.read_text()) for p in data.glob("rank*.json")}


def _tar_names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        return sorted(archive.getnames())


def test_one_host_two_processes_end_to_end(tmp_path, capsys):
    data = tmp_path / "train"
    data.mkdir()
    (data / "part-0.csv").write_text("1,2\n")
    (data / "sub").mkdir()
    (data / "sub" / "part-1.csv").write_text("3,4\n")
    checkpoints = tmp_path / "checkpoints"
    outputs = tmp_path / "outputs"
    spec = make_spec(processes_per_host=2, framework_version="2.1.0", hyperparameters={"epochs": 2, "lr": 0.5},
                     inputs=(InputChannel(name="train", uri=f"file://{data}"),),
                     output_path=str(outputs), checkpoint_local_path=str(checkpoints))

    job = submit(spec, wait=True, logs=True)

    out, err = capsys.readouterr()
    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed"
    assert [t["Status"] for t in record["SecondaryStatusTransitions"]] == [
        "Starting", "Downloading", "Training", "Uploading", "Completed"]
    assert record["TrainingStartTime"] <= record["TrainingEndTime"]
    # logs streamed live with host and rank; a rank's view is a filter of the one stored copy, job.log
    assert "[algo-1 rank0] hello from rank 0" in out and "[algo-1 rank1] stderr line from rank 1" in out
    job_dir = Path(record["JobDir"])
    # stdout and stderr are separate streams: their relative order is not fixed
    assert sorted(rank_lines(job_dir / "logs" / "job.log", "algo-1", 1)) == [
        "hello from rank 1", "stderr line from rank 1"]
    assert "[algo-1 rank0] hello from rank 0" in list(job.logs())
    # the installed torch differs from framework_version 2.1.0: one warning line, and the job ran
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"warning: job {spec.job_name} asks for pytorch 2.1.0; it runs locally with the "
                                  "installed torch ")

    reports = _reports(job_dir, "algo-1")
    assert sorted(reports) == [0, 1] and {r["world_size"] for r in reports.values()} == {2}
    assert all(r["torchrun"] for r in reports.values())  # two processes per host: torchrun starts them
    code_dir = job_dir / "algo-1" / "code"
    for report in reports.values():
        assert report["argv"] == ["--epochs", "2", "--lr", "0.5"] == json.loads(report["env"]["SM_USER_ARGS"])
        assert report["cwd"] == str(code_dir)
        assert report["channels"] == {"train": ["part-0.csv", "sub/part-1.csv"]}
        assert report["env"]["SM_HP_LR"] == "0.5" and report["env"]["SM_CURRENT_HOST"] == "algo-1"
    # a local channel is the job's own copy, never a link to the user's folder
    view = job_dir / "algo-1" / "input" / "data" / "train"
    assert not view.is_symlink() and (view / "sub" / "part-1.csv").read_bytes() == (data / "sub" / "part-1.csv").read_bytes()
    # artifacts under output_path/<job>/output
    model = outputs / spec.job_name / "output" / "model.tar.gz"
    assert job.model_data == str(model)
    assert _tar_names(model.read_bytes()) == ["model.txt"]
    assert _tar_names((outputs / spec.job_name / "output" / "output.tar.gz").read_bytes()) == ["rank0.json", "rank1.json"]
    # attach finds it in the registry
    attached = attach(spec.job_name)
    assert isinstance(attached, LocalTrainingJob) and attached.describe() == job.describe()

    # a second job with the same checkpoint_local_path resumes from the first one's checkpoints
    again = submit(replace(spec, job_name=unique("resume"), framework_version="2.13"),
                   wait=True, logs=False)
    assert {r["checkpoint_runs"] for r in _reports(Path(again.describe()["JobDir"]), "algo-1").values()} == {2}
    assert "warning" not in capsys.readouterr().err


def test_two_hosts_with_s3_channels_and_s3_output(moto_server):
    s3 = boto3.client("s3", region_name="us-west-2")
    bucket = unique("local-bucket")
    s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    for key in ("data/train/a.csv", "data/train/nested/b.csv", "shards/s-0.csv", "shards/s-1.csv"):
        s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    s3.put_object(Bucket=bucket, Key="ckpt/runs-rank0.txt", Body=b"5")  # a previous run's checkpoint
    spec = make_spec(instance_count=2, processes_per_host=1, hyperparameters={"allreduce": 1},
                     inputs=(InputChannel(name="train", uri=f"s3://{bucket}/data/train"),
                             InputChannel(name="shards", uri=f"s3://{bucket}/shards/", distribution="ShardedByS3Key")),
                     output_path=f"s3://{bucket}/results", checkpoint_s3_uri=f"s3://{bucket}/ckpt")

    job = submit(spec, wait=True, logs=False)

    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed", record.get("FailureReason")
    job_dir = Path(record["JobDir"])
    first, second = _reports(job_dir, "algo-1"), _reports(job_dir, "algo-2")
    # no distribution: each host runs the script itself, as the PyTorch toolkit's ProcessRunner does (no torchrun, no
    # RANK); the script takes its host's index and meets the other at the toolkit's MASTER_ADDR:MASTER_PORT
    assert not first[0]["torchrun"] and not second[1]["torchrun"]
    assert list(first) == [0] and list(second) == [1]
    assert first[0]["allreduce_sum"] == second[1]["allreduce_sum"] == 1.0
    assert first[0]["env"]["SM_HOSTS"] == '["algo-1","algo-2"]' and second[1]["env"]["SM_CURRENT_HOST"] == "algo-2"
    assert first[0]["channels"]["train"] == second[1]["channels"]["train"] == ["a.csv", "nested/b.csv"]
    assert first[0]["channels"]["shards"] == ["s-0.csv"] and second[1]["channels"]["shards"] == ["s-1.csv"]
    # checkpoints/ started from checkpoint_s3_uri and went back to it
    assert first[0]["checkpoint_runs"] == 6 and second[1]["checkpoint_runs"] == 1
    assert s3.get_object(Bucket=bucket, Key="ckpt/runs-rank0.txt")["Body"].read() == b"6"
    assert s3.get_object(Bucket=bucket, Key="ckpt/runs-rank1.txt")["Body"].read() == b"1"
    assert job.model_data == f"s3://{bucket}/results/{spec.job_name}/output/model.tar.gz"
    model = s3.get_object(Bucket=bucket, Key=f"results/{spec.job_name}/output/model.tar.gz")["Body"].read()
    assert _tar_names(model) == ["model.txt"]
    output = s3.get_object(Bucket=bucket, Key=f"results/{spec.job_name}/output/output.tar.gz")["Body"].read()
    assert _tar_names(output) == ["algo-1/rank0.json", "algo-2/rank1.json"]


def test_two_jobs_at_once_share_the_registry():
    """Two jobs run side by side, each supervisor writing the registry while the other does."""
    specs = [make_spec(job_name=unique("concurrent")) for _ in range(2)]
    jobs = [submit(spec, wait=False) for spec in specs]
    records = [job.wait(logs=False) for job in jobs]
    assert [r["TrainingJobStatus"] for r in records] == ["Completed", "Completed"]
    for record in records:
        assert [t["Status"] for t in record["SecondaryStatusTransitions"]] == [
            "Starting", "Training", "Uploading", "Completed"]
    from sagelaunch.launcher.local import registry

    listed = {r["TrainingJobName"] for r in registry.list_jobs(status="Completed")}
    assert {s.job_name for s in specs} <= listed


def test_profiled_job_gets_its_settings_and_a_system_monitor(tmp_path):
    import importlib.util

    from sagelaunch.jobspec.spec import ProfilerSettings

    spec = make_spec(profiler=ProfilerSettings(system_monitor_interval_millis=100), output_path=str(tmp_path))
    job = submit(spec, wait=True, logs=False)
    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed"
    assert record["ProfilerConfig"]["ProfilingIntervalInMilliseconds"] == 100
    job_dir = Path(record["JobDir"])
    config_file = job_dir / "algo-1" / "input" / "config" / "profilerconfig.json"
    assert json.loads(config_file.read_text())["ProfilingIntervalInMilliseconds"] == 100
    env = _reports(job_dir, "algo-1")[0]["env"]
    assert env["SAGELAUNCH_PROFILER_CONFIG"] == str(config_file)
    assert env["SM_PROFILER_OUTPUT_DIR"] == str(job_dir / "algo-1" / "output" / "profiler")
    if importlib.util.find_spec("sagelaunch.profiler.monitor") is not None:  # the profiler package's sidecar ran per host
        published = tmp_path / spec.job_name / "profiler"
        assert job.profiler_output == str(published)
        assert any((published / "algo-1").iterdir())
