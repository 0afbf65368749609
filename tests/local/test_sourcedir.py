"""What ships from source_dir (one rule for the SageMaker archive and the local copy) and symlink loops in paths."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from sagelaunch.jobspec.spec import InputChannel
from sagelaunch.launcher.local import registry
from sagelaunch.launcher.local.backend import submit
from sagelaunch.launcher.local import plan, preflight
from sagelaunch.launcher.local.local_job import compile_local_job
from sagelaunch.launcher.common.sourcedir import DEFAULT_IGNORE_PATTERNS, LARGE_CODE_BYTES, pack_sourcedir
from tests.local.conftest import make_spec, unique

REPO = Path(__file__).resolve().parents[2]
SECRETS = [".aws/credentials", ".ssh/id_rsa", ".netrc", ".env", ".env.local", ".envrc", "secrets/token.txt",
           "sub/.git-credentials", "deploy/server.pem", ".docker/config.json", ".config/gcloud/credentials.db"]
SHIPPED = ["alias.py", "lib/util.py", "train.py"]


def _source(root: Path, outside: Path) -> Path:
    for rel in SECRETS:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("AWS_SECRET_ACCESS_KEY=do-not-ship\n")
    (root / "lib").mkdir(exist_ok=True)
    (root / "lib" / "util.py").write_text("X = 1\n")
    (root / "train.py").write_text("print('training')\n")
    outside.mkdir(exist_ok=True)
    (outside / "passwd").write_text("root:x:0:0:secret-outside\n")
    (root / "passwd").symlink_to(outside / "passwd")  # a file outside source_dir
    (root / "elsewhere").symlink_to(outside, target_is_directory=True)  # a folder outside
    (root / "alias.py").symlink_to("train.py")  # a file inside: its content ships under the link's name
    (root / "gone.py").symlink_to("missing.py")  # dangling
    return root


def _tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def test_credentials_and_outside_links_never_ship_in_the_archive_nor_the_local_copy(tmp_path, caplog):
    source = _source(tmp_path / "src", tmp_path / "outside")
    spec = make_spec("train.py", source_dir=str(source))
    with caplog.at_level(logging.WARNING, logger="sagelaunch.sourcedir"):
        names = pack_sourcedir(source, "train.py", tmp_path / "sourcedir.tar.gz")
    with tarfile.open(tmp_path / "sourcedir.tar.gz") as archive:
        members = archive.getmembers()
        assert sorted(m.name for m in members) == SHIPPED == sorted(names)
        assert all(m.isfile() for m in members)  # no links stored: nothing dangles after extraction
        assert archive.extractfile("alias.py").read() == b"print('training')\n"
    warned = caplog.text
    assert "'passwd' → " in warned and "outside source_dir" in warned
    assert "'elsewhere' → " in warned and "'gone.py' → 'missing.py'" in warned and "does not exist" in warned

    # the local backend copies by the same rule
    files = preflight.source_files(spec)
    assert sorted(name for _, name in files) == SHIPPED
    plan.copy_code(compile_local_job(spec, tmp_path, files), [tmp_path / "code"])
    assert _tree(tmp_path / "code") == SHIPPED
    copied = b"".join(p.read_bytes() for p in (tmp_path / "code").rglob("*") if p.is_file())
    assert b"do-not-ship" not in copied and b"secret-outside" not in copied


def test_ignore_patterns_extend_the_default_list(tmp_path):
    source = _source(tmp_path / "src", tmp_path / "outside")
    names = pack_sourcedir(source, "train.py", tmp_path / "a.tar.gz", ignore_patterns=["lib"])
    assert names == ["alias.py", "train.py"]
    assert ".aws" in DEFAULT_IGNORE_PATTERNS and "secrets" in DEFAULT_IGNORE_PATTERNS


def test_readme_lists_every_default_pattern():
    readme = (REPO / "README.md").read_text()
    section = readme.split("### What never ships", 1)[1].split("\n#", 1)[0]
    assert all(f"`{pattern}`" in section for pattern in DEFAULT_IGNORE_PATTERNS)


def test_large_archive_warns(tmp_path, caplog, monkeypatch):
    import sagelaunch.launcher.common.sourcedir as sourcedir

    monkeypatch.setattr(sourcedir, "LARGE_CODE_BYTES", 1000)  # the rule, not 100 MB of test data
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text("print(1)\n")
    (tmp_path / "src" / "weights.bin").write_bytes(os.urandom(5000))
    with caplog.at_level(logging.WARNING, logger="sagelaunch.sourcedir"):
        pack_sourcedir(tmp_path / "src", "train.py", tmp_path / "a.tar.gz")
    assert "sourcedir.tar.gz: 0.0 MB, over 0.000953674 MB" in caplog.text and "ignore_patterns" in caplog.text
    assert LARGE_CODE_BYTES == 100 * 2**20


def _loop(folder: Path, name: str = "loop") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}-a").symlink_to(folder / f"{name}-b")
    (folder / f"{name}-b").symlink_to(folder / f"{name}-a")
    return folder / f"{name}-a"


def _nothing_created(name: str) -> None:
    assert not registry.exists(name) and not registry.job_dir(name).exists()


def test_symlink_loop_inside_source_dir_is_named_before_anything_is_created(tmp_path):
    source = tmp_path / "src"
    _loop(source / "data")
    (source / "train.py").write_text("print(1)\n")
    spec = make_spec("train.py", source_dir=str(source))
    with pytest.raises(ValueError, match=r"'data/loop-a' is a symlink loop"):
        submit(spec, wait=False)
    _nothing_created(spec.job_name)
    with pytest.raises(ValueError, match=r"'data/loop-a' is a symlink loop"):
        pack_sourcedir(source, "train.py", tmp_path / "a.tar.gz")
    assert not (tmp_path / "a.tar.gz").exists()


@pytest.mark.parametrize("field", ["source_dir", "output_path", "inputs", "checkpoint_local_path"])
def test_symlink_loop_as_a_path_is_one_clear_error(tmp_path, field):
    loop = _loop(tmp_path)
    overrides = {"source_dir": {"source_dir": str(loop)},
                 "output_path": {"output_path": str(loop / "out")},
                 "inputs": {"inputs": (InputChannel(name="train", uri=f"file://{loop}"),)},
                 "checkpoint_local_path": {"checkpoint_local_path": str(loop)}}[field]
    spec = make_spec(**overrides)
    with pytest.raises(ValueError, match=r"is a symlink loop") as raised:
        submit(spec, wait=False)
    assert str(loop) in str(raised.value) and "\n" not in str(raised.value)
    _nothing_created(spec.job_name)


@pytest.mark.parametrize("where", ["inside", "itself"])
def test_cli_fit_with_a_loop_in_source_dir_prints_one_line(tmp_path, where):
    """A loop inside source_dir, or source_dir itself a loop given relative to the job file."""
    if where == "inside":
        source, named = tmp_path / "src", "'loop-a' is a symlink loop"
        _loop(source)
        (source / "train.py").write_text("print(1)\n")
    else:
        source = _loop(tmp_path / "links").relative_to(tmp_path)
        named = f"'{tmp_path / source}' is a symlink loop"
    name = unique("loop-cli")
    job = tmp_path / "job.yaml"
    job.write_text(json.dumps({"framework": "pytorch", "framework_version": "2.8.0", "py_version": "py312",
                               "entry_point": "train.py", "source_dir": str(source), "instance_type": "local",
                               "instance_count": 1, "role": "arn:aws:iam::123456789012:role/R", "job_name": name}))
    env = {**os.environ, "PYTHONPATH": str(REPO), "COLUMNS": "300"}
    answer = subprocess.run([sys.executable, "-m", "sagelaunch.cli", "fit", str(job), "--no-wait"], env=env,
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert answer.returncode == 1, answer.stdout + answer.stderr
    assert "Traceback" not in answer.stderr and named in answer.stderr
    errors = [line for line in answer.stderr.splitlines() if line.strip() and not line.startswith("warning: ")]
    assert len(errors) == 1, answer.stderr
    _nothing_created(name)
