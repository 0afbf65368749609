"""The SDK v2 settings a local job implements, run for real: code from git_config and dependencies ship into the
host's code folder as they ship in the SageMaker code archive, and model_uri is the job's model channel."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from sagelaunch.launcher.common.sourcedir import iter_source_files

JOB_SCRIPT = """
import json, os
code = os.path.dirname(os.path.abspath(__file__))
files = sorted(os.path.relpath(os.path.join(d, f), code) for d, _, fs in os.walk(code) for f in fs)
model = os.environ["SM_CHANNEL_MODEL"]
import shared.util, helper  # the dependencies import from the code folder, as in a SageMaker container
print("REPORT " + json.dumps({"files": files, "model": sorted(os.listdir(model)), "value": shared.util.Z + helper.Y}))
"""


def _git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=cwd, check=True,
                   capture_output=True)


@pytest.fixture
def repository(tmp_path, monkeypatch) -> str:
    """A bare repository holding src/train.py and shared/, reached as https://git.example.com/… (insteadOf)."""
    bare, seed = tmp_path / "project.git", tmp_path / "seed"
    _git("init", "-q", "--bare", str(bare))
    _git("init", "-q", str(seed))
    (seed / "src").mkdir()
    (seed / "src" / "train.py").write_text(JOB_SCRIPT)
    (seed / "shared").mkdir()
    (seed / "shared" / "__init__.py").write_text("")
    (seed / "shared" / "util.py").write_text("Z = 3\n")
    _git("add", "-A", cwd=seed)
    _git("commit", "-qm", "one", cwd=seed)
    _git("branch", "-M", "main", cwd=seed)
    _git("push", "-q", str(bare), "main", cwd=seed)
    _git("--git-dir", str(bare), "symbolic-ref", "HEAD", "refs/heads/main")  # a clone checks out main
    url = "https://git.example.com/team/project.git"
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.file://{bare}.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", url)
    return url


@pytest.mark.slow  # a real local job (supervisor, torchrun)
@pytest.mark.timeout(300)
def test_git_code_dependencies_and_model_uri_reach_the_local_job(tmp_path, repository, capsys):
    from sagelaunch.estimators import PyTorch

    helper = tmp_path / "helper.py"
    helper.write_text("Y = 2\n")
    model = tmp_path / "model"
    model.mkdir()
    (model / "weights.bin").write_bytes(b"w")
    est = PyTorch(entry_point="train.py", source_dir="src", git_config={"repo": repository, "branch": "main"},
                  dependencies=["shared", str(helper)], framework_version="2.0.0", py_version="py310",
                  instance_type="local", output_path=str(tmp_path / "out"), model_uri=str(model))
    job = est.fit(wait=True, logs=True)
    record = job.describe()
    assert record["TrainingJobStatus"] == "Completed", record.get("FailureReason")
    [report] = [json.loads(line.split("REPORT ", 1)[1]) for line in capsys.readouterr().out.splitlines()
                if "REPORT " in line]
    assert report["value"] == 5 and report["model"] == ["weights.bin"]
    # the same layout the SageMaker archive gets (launcher.common.sourcedir is the one rule for both)
    assert [f for f in report["files"] if "__pycache__" not in f] == [
        "helper.py", "shared/__init__.py", "shared/util.py", "train.py"]


def test_dependencies_ship_at_the_root_and_a_taken_name_is_refused(tmp_path):
    src, lib = tmp_path / "src", tmp_path / "lib" / "shared"
    src.mkdir()
    (src / "train.py").write_text("")
    lib.mkdir(parents=True)
    (lib / "a.py").write_text("")
    (lib / ".git").mkdir()
    (lib / ".git" / "config").write_text("")  # never ships, from a dependency neither
    names = [name for _, name in iter_source_files(src, "train.py", (), [str(lib)])]
    assert names == ["train.py", "shared/a.py"]
    (src / "shared").mkdir()
    (src / "shared" / "b.py").write_text("")
    with pytest.raises(ValueError, match="would ship as 'shared', which the code already holds"):
        list(iter_source_files(src, "train.py", (), [str(lib)]))
    with pytest.raises(ValueError, match="'missing' does not exist"):
        list(iter_source_files(src, "train.py", (), ["missing"]))


def test_a_git_config_error_says_what_failed_without_credentials(tmp_path, repository):
    from sagelaunch.launcher.common.gitclone import clone

    with pytest.raises(ValueError, match=r"git checkout nope failed for https://git\.example\.com"):
        clone({"repo": repository, "branch": "nope"}, "train.py", "src", [])
    with pytest.raises(ValueError, match="entry_point='other.py' is not a file in source_dir='src'"):
        clone({"repo": repository}, "other.py", "src", [])
    with pytest.raises(ValueError) as err:
        clone({"repo": repository + "-missing", "token": "s3cr3t"}, "train.py", None, [])
    assert "s3cr3t" not in str(err.value) and "git clone failed" in str(err.value)
