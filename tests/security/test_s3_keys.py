"""One S3-to-disk mapping (jobspec.s3uri.key_destination) for every download: a key that would leave its
folder is refused with the key named — local channels, checkpoint_s3_uri, an s3:// source_dir, models."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sagelaunch.jobspec.s3uri import key_destination, unsafe_key_reason
from sagelaunch.jobspec.spec import InputChannel
from sagelaunch.launcher.local import registry
from sagelaunch.launcher.local.backend import submit
from sagelaunch.launcher.local import s3 as local_s3
from tests.local.conftest import make_spec
from tests.security import hostile_archives as hostile

ESCAPING_KEYS = ["../escaped.txt", "sub/../../escaped.txt", "./escaped.txt", "a//escaped.txt", "/escaped.txt",
                 "dir\\..\\escaped.txt"]


@pytest.mark.parametrize("relative", ESCAPING_KEYS + ["", "sub/"])
def test_the_mapping_refuses_names_that_leave_the_folder(tmp_path, relative):
    assert unsafe_key_reason(relative) is not None
    with pytest.raises(ValueError, match=r"S3 object 'data/.*' refused: .* rename the object") as refused:
        key_destination(tmp_path, "data/" + relative, relative)
    assert "\n" not in str(refused.value)


def test_the_mapping_refuses_a_key_through_a_symlink_in_the_folder(tmp_path):
    (tmp_path / "dest").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "dest" / "sub").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert key_destination(tmp_path / "dest", "p/a/b.txt", "a/b.txt") == (tmp_path / "dest" / "a" / "b.txt").resolve()
    with pytest.raises(ValueError, match=r"'p/sub/x.txt' refused: it resolves outside .* through a symlink"):
        key_destination(tmp_path / "dest", "p/sub/x.txt", "sub/x.txt")


def _nothing_escaped(root: Path) -> None:
    assert not [p for p in root.rglob("escaped*")], "an object was written outside its folder"


def test_s3_objects_keep_dotdot_keys_on_the_moto_server(bucket):
    """The premise: S3 (here moto) stores such keys as they are, so a download must refuse them itself."""
    s3, name = bucket
    s3.put_object(Bucket=name, Key="data/../escaped.txt", Body=b"x")
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=name)["Contents"]] == ["data/../escaped.txt"]


@pytest.mark.parametrize("key", ["train/../../escaped.txt", "train//escaped.txt", "train/./escaped.txt"])
def test_a_local_channel_with_an_escaping_key_is_refused_before_the_job_exists(bucket, tmp_path, key):
    s3, name = bucket
    s3.put_object(Bucket=name, Key="train/ok.csv", Body=b"1")
    s3.put_object(Bucket=name, Key=key, Body=b"escaped")
    spec = make_spec(inputs=(InputChannel(name="train", uri=f"s3://{name}/train/"),))
    with pytest.raises(ValueError) as refused:
        submit(spec, wait=False)
    assert f"S3 object {key!r} refused" in str(refused.value) and "inputs['train']" in str(refused.value)
    assert not registry.exists(spec.job_name) and not registry.job_dir(spec.job_name).exists()
    _nothing_escaped(registry.job_dir(spec.job_name).parent.parent)


def test_a_checkpoint_restore_with_an_escaping_key_is_refused_before_the_job_exists(bucket, tmp_path):
    s3, name = bucket
    s3.put_object(Bucket=name, Key="ckpt/step-1.pt", Body=b"1")
    s3.put_object(Bucket=name, Key="ckpt/../../../escaped.pt", Body=b"escaped")
    spec = make_spec(checkpoint_s3_uri=f"s3://{name}/ckpt", checkpoint_local_path=str(tmp_path / "ckpt"))
    with pytest.raises(ValueError, match=r"checkpoint_s3_uri: .*S3 object 'ckpt/../../../escaped.pt' refused"):
        submit(spec, wait=False)
    assert not registry.job_dir(spec.job_name).exists()
    _nothing_escaped(tmp_path)


def test_the_download_itself_refuses_before_fetching_anything(bucket, tmp_path):
    """The same rule guards the download, for any caller that did not list first."""
    s3, name = bucket
    s3.put_object(Bucket=name, Key="ckpt/a.pt", Body=b"1")
    s3.put_object(Bucket=name, Key="ckpt/../escaped.pt", Body=b"escaped")
    with pytest.raises(ValueError, match=r"'ckpt/../escaped.pt' refused"):
        local_s3.download(f"s3://{name}/ckpt/", ["ckpt/a.pt", "ckpt/../escaped.pt"], tmp_path / "dest")
    assert not (tmp_path / "dest" / "a.pt").exists(), "nothing is downloaded when one key is refused"
    _nothing_escaped(tmp_path)


def test_a_hostile_s3_source_dir_is_refused_and_nothing_escapes(bucket, tmp_path):
    """A local job whose source_dir is an s3:// sourcedir.tar.gz goes through the one unpacker."""
    s3, name = bucket
    archive = tmp_path / "sourcedir.tar.gz"
    hostile.dotdot(archive, tmp_path / "target")
    s3.upload_file(str(archive), name, "code/sourcedir.tar.gz")
    spec = make_spec("train.py", source_dir=f"s3://{name}/code/sourcedir.tar.gz")
    with pytest.raises(ValueError, match=r"member '../escaped-dotdot.txt' refused: its path leaves the extraction"):
        submit(spec, wait=False)
    job_dir = registry.job_dir(spec.job_name)
    assert not (job_dir.parent / "escaped-dotdot.txt").exists() and not list(job_dir.parent.rglob("escaped-*"))


def test_a_model_key_is_mapped_by_the_same_rule(bucket, tmp_path):
    """PyTorchModel's local deploy downloads model_data under its basename: a key ending in '..' is refused."""
    from sagelaunch.estimators import PyTorchModel

    s3, name = bucket
    s3.put_object(Bucket=name, Key="models/..", Body=b"x")
    model = PyTorchModel(f"s3://{name}/models/..", role="SageMakerRole", entry_point="inference.py",
                         framework_version="2.0.0", region="us-west-2")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    with pytest.raises(ValueError, match=r"S3 object 'models/..' refused: it has a '.' or '..' part"):
        model._fetch_local(f"s3://{name}/models/..", str(scratch))
    assert sorted(os.listdir(tmp_path)) == ["scratch"]


def test_cli_fit_names_the_refused_key_in_one_line(bucket, tmp_path):
    import json
    import subprocess
    import sys

    s3, name = bucket
    s3.put_object(Bucket=name, Key="train/../../escaped.csv", Body=b"escaped")
    (tmp_path / "train.py").write_text("print(1)\n")
    job_name = f"{name}-job"
    job = tmp_path / "job.yaml"
    job.write_text(json.dumps({"framework": "pytorch", "framework_version": "2.8.0", "py_version": "py312",
                               "entry_point": "train.py", "source_dir": str(tmp_path), "instance_type": "local",
                               "instance_count": 1, "role": "arn:aws:iam::123456789012:role/R", "job_name": job_name,
                               "inputs": {"train": f"s3://{name}/train/"}}))
    repo = Path(__file__).resolve().parents[2]
    answer = subprocess.run([sys.executable, "-m", "sagelaunch", "fit", str(job), "--no-wait"], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(repo), "COLUMNS": "300"}, capture_output=True,
                            text=True, timeout=300)
    assert answer.returncode == 1, answer.stdout + answer.stderr
    lines = [line for line in answer.stderr.splitlines() if line.strip() and not line.startswith("warning: ")]
    assert len(lines) == 1 and "Traceback" not in answer.stderr, answer.stderr
    assert lines[0].startswith("error: ") and "S3 object 'train/../../escaped.csv' refused" in lines[0]
    assert not registry.job_dir(job_name).exists()
    _nothing_escaped(tmp_path)
