"""One unpacker for every archive sagelaunch did not write (launcher/common/archive.py), through every path that
unpacks one: hostile members are refused with one line naming them, and nothing lands outside the target."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from sagelaunch.launcher.common.archive import RATIO_ALLOWANCE_BYTES, UnpackLimits, UnsafeArchiveError, unpack
from tests.security import hostile_archives as hostile

REPO = Path(__file__).resolve().parents[2]


def _outside_untouched(work: Path, outside_name: str, before: set[str]) -> None:
    """Nothing was created or changed next to the target, and the target holds nothing of the archive."""
    assert {p.name for p in work.iterdir()} == before, "the unpacker wrote next to its target"
    if outside_name == "victim.txt":
        assert (work / "victim.txt").read_text() == "original\n"
    assert not (work / outside_name).exists() or outside_name == "victim.txt"
    assert list((work / "target").rglob("*")) == [], "a refused archive leaves nothing it wrote behind"


def _setup(tmp_path: Path, kind: str) -> tuple[Path, Path, str, set[str]]:
    work = tmp_path / "work"
    target = work / "target"
    target.mkdir(parents=True)
    (work / "victim.txt").write_text("original\n")
    archive = tmp_path / f"{kind}.tar.gz"
    outside = hostile.HOSTILE[kind](archive, target)
    return work, archive, outside, {p.name for p in work.iterdir()}


@pytest.mark.parametrize("kind", sorted(hostile.HOSTILE))
def test_hostile_members_are_refused_naming_the_member_and_nothing_escapes(tmp_path, kind):
    work, archive, outside, before = _setup(tmp_path, kind)
    with pytest.raises(UnsafeArchiveError) as refused:
        unpack(archive, work / "target")
    message = str(refused.value)
    assert "\n" not in message and str(archive) in message and "member '" in message
    assert hostile.REASONS[kind] in message, message
    _outside_untouched(work, outside, before)


@pytest.mark.parametrize("member", ["folder-link/escaped.txt", "file-link"])
def test_links_already_in_the_target_are_never_written_through(tmp_path, member):
    """A target that holds links (made by someone else) gets nothing written through them."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.txt").write_text("original\n")
    target = tmp_path / "target"
    target.mkdir()
    (target / "folder-link").symlink_to(outside, target_is_directory=True)
    (target / "file-link").symlink_to(outside / "kept.txt")
    archive = tmp_path / "a.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        info = tarfile.TarInfo(member)
        info.size = len(hostile.PAYLOAD)
        tar.addfile(info, io.BytesIO(hostile.PAYLOAD))
    with pytest.raises(UnsafeArchiveError, match=rf"member {member!r} refused: "
                                                 r"('folder-link' is already there and is not a folder|cannot write)"):
        unpack(archive, target)
    assert sorted(p.name for p in outside.iterdir()) == ["kept.txt"]
    assert (outside / "kept.txt").read_text() == "original\n"


def test_an_ordinary_archive_unpacks_files_and_folders_with_their_modes(tmp_path):
    source = tmp_path / "src"
    (source / "code").mkdir(parents=True)
    (source / "config.json").write_text("{}")
    (source / "code" / "serve.sh").write_text("#!/bin/sh\n")
    os.chmod(source / "code" / "serve.sh", 0o755)
    with tarfile.open(tmp_path / "model.tar.gz", "w:gz") as tar:
        tar.add(source, arcname=".")
    unpack(tmp_path / "model.tar.gz", tmp_path / "out")
    assert sorted(p.relative_to(tmp_path / "out").as_posix() for p in (tmp_path / "out").rglob("*")) == [
        "code", "code/serve.sh", "config.json"]
    assert os.stat(tmp_path / "out" / "code" / "serve.sh").st_mode & 0o777 == 0o755
    assert os.stat(tmp_path / "out" / "config.json").st_mode & 0o777 == 0o644


def test_a_bomb_stops_at_the_budget_while_writing(tmp_path, monkeypatch):
    """24 MiB of zeros gzip to ~24 KB: past 200x the archive plus the allowance, by default."""
    size = RATIO_ALLOWANCE_BYTES + 8 * 2**20
    hostile.zero_bomb(tmp_path / "bomb.tar.gz", size)
    with pytest.raises(UnsafeArchiveError, match=r"member 'weights.bin' refused: the archive's content passes its "
                       r"budget: .* raise SAGELAUNCH_UNPACK_MAX_RATIO") as refused:
        unpack(tmp_path / "bomb.tar.gz", tmp_path / "out")
    assert "\n" not in str(refused.value)
    assert list((tmp_path / "out").iterdir()) == [], "the partly written member is removed"
    # the budget is the user's to raise, by its variable
    monkeypatch.setenv("SAGELAUNCH_UNPACK_MAX_RATIO", "100000")
    unpack(tmp_path / "bomb.tar.gz", tmp_path / "out")
    assert (tmp_path / "out" / "weights.bin").stat().st_size == size


def test_member_and_total_budgets_are_configurable(tmp_path, monkeypatch):
    hostile.zero_bomb(tmp_path / "a.tar.gz", 4096)
    monkeypatch.setenv("SAGELAUNCH_UNPACK_MAX_MEMBER_BYTES", "4000")
    with pytest.raises(UnsafeArchiveError, match=r"4,096 bytes is over the limit of 4,000 bytes; .* raise "
                       r"SAGELAUNCH_UNPACK_MAX_MEMBER_BYTES"):
        unpack(tmp_path / "a.tar.gz", tmp_path / "out")
    monkeypatch.delenv("SAGELAUNCH_UNPACK_MAX_MEMBER_BYTES")
    with pytest.raises(UnsafeArchiveError, match=r"raise SAGELAUNCH_UNPACK_MAX_BYTES"):
        unpack(tmp_path / "a.tar.gz", tmp_path / "out", UnpackLimits(max_total_bytes=1000))
    monkeypatch.setenv("SAGELAUNCH_UNPACK_MAX_BYTES", "lots")
    with pytest.raises(ValueError, match=r"SAGELAUNCH_UNPACK_MAX_BYTES='lots' is not a positive number"):
        UnpackLimits.from_environment()


def test_a_sparse_member_is_refused_before_its_holes_are_written(tmp_path):
    hostile.sparse(tmp_path / "sparse.tar.gz", tmp_path / "made")
    assert (tmp_path / "sparse.tar.gz").stat().st_size < 4096  # 10 GiB of holes in a few hundred bytes
    with pytest.raises(UnsafeArchiveError, match=r"member 'holes.bin' refused: it is a sparse file"):
        unpack(tmp_path / "sparse.tar.gz", tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []


def test_a_file_that_is_not_an_archive_is_one_line(tmp_path):
    (tmp_path / "broken.tar.gz").write_bytes(b"\x1f\x8b" + os.urandom(200))
    with pytest.raises(UnsafeArchiveError, match=r"broken.tar.gz: cannot be unpacked .*; pass a tar or tar.gz") as bad:
        unpack(tmp_path / "broken.tar.gz", tmp_path / "out")
    assert "\n" not in str(bad.value)


# ---------- every path that unpacks a model or code archive ----------

def _no_escape_in(folder: Path) -> None:
    assert not list(folder.rglob("escaped-*")), "a member landed outside its extraction folder"


@pytest.fixture
def chain_model(tmp_path):
    archive = tmp_path / "model.tar.gz"
    hostile.symlink_chain(archive, tmp_path / "target")  # config.json, then the CVE-2025-4517 links
    return archive


def test_cli_package_prints_one_error_line_naming_the_member(tmp_path, chain_model):
    out = tmp_path / "out.tar.gz"
    proc = subprocess.run([sys.executable, "-m", "sagelaunch", "package", str(chain_model), "-o", str(out)],
                          capture_output=True, text=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    assert "member 'a' refused: it is a symlink" in lines[0]
    assert not out.exists() and not out.with_name(out.name + ".partial").exists()


def test_cli_package_refuses_a_sparse_member_instead_of_gzipping_its_holes(tmp_path):
    hostile.sparse(tmp_path / "sparse.tar.gz", tmp_path / "made")
    proc = subprocess.run([sys.executable, "-m", "sagelaunch", "package", str(tmp_path / "sparse.tar.gz"), "-o",
                           str(tmp_path / "out.tar.gz")], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1, proc.stderr
    assert "member 'holes.bin' refused: it is a sparse file" in proc.stderr
    assert not (tmp_path / "out.tar.gz").exists()


def _deploy_paths(archive: Path):
    from sagelaunch.estimators import Model, PyTorchModel
    from sagelaunch.launcher.local.serving.endpoint import LocalEndpoint

    yield "Model.deploy('local')", lambda: Model(model_data=str(archive)).deploy(1, "local")
    yield "PyTorchModel.deploy(1, 'local')", lambda: PyTorchModel(
        str(archive), role="SageMakerRole", entry_point=str(REPO / "scripts" / "inference.py"),
        framework_version="2.0.0").deploy(1, "local")
    yield "LocalEndpoint.start()", lambda: LocalEndpoint(archive).start()


@pytest.mark.parametrize("path", ["Model.deploy('local')", "PyTorchModel.deploy(1, 'local')",
                                  "LocalEndpoint.start()"])
def test_every_local_deploy_refuses_the_hostile_model_before_serving(tmp_path, chain_model, path, monkeypatch):
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # the deploy's work folders land here
    deploy = dict(_deploy_paths(chain_model))[path]
    with pytest.raises(UnsafeArchiveError, match=r"member 'a' refused: it is a symlink"):
        deploy()
    _no_escape_in(tmp_path)
    assert list(scratch.iterdir()) == [], "the deploy's work folder is removed after the refusal"


@pytest.mark.slow  # a real local job (supervisor, torchrun)
@pytest.mark.timeout(300)
def test_attach_then_deploy_refuses_a_tampered_model_of_a_real_job(tmp_path, chain_model, monkeypatch):
    """PyTorch.attach(job).deploy(…, 'local'): the job's model.tar.gz swapped for the hostile one afterwards."""
    import shutil
    import tempfile

    from sagelaunch.estimators import PyTorch

    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(
        "import os\nopen(os.path.join(os.environ['SM_MODEL_DIR'], 'weights.txt'), 'w').write('w')\n")
    est = PyTorch(entry_point="train.py", source_dir=str(tmp_path / "src"), framework_version="2.0.0",
                  py_version="py310", instance_type="local", output_path=str(tmp_path / "out"))
    est.fit(logs=False)
    model = Path(est.model_data.removeprefix("file://"))
    with tarfile.open(model) as written:
        assert written.getnames() == ["weights.txt"]
    shutil.copyfile(chain_model, model)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(UnsafeArchiveError, match=r"member 'a' refused: it is a symlink"):
        PyTorch.attach(est.latest_training_job.name).deploy(1, "local")
    _no_escape_in(tmp_path)
    assert list(scratch.iterdir()) == []


def test_a_jobs_model_archive_stores_links_as_content_and_leaves_links_out_behind(tmp_path, capfd):
    from sagelaunch.launcher.local.artifacts import _merged_files, _write_tar

    model, outside = tmp_path / "model", tmp_path / "home"
    model.mkdir(), outside.mkdir()
    (model / "weights.bin").write_bytes(b"weights")
    (model / "alias.bin").symlink_to("weights.bin")  # a link inside the model folder
    (outside / "credentials").write_text("secret")
    (model / "creds").symlink_to(outside / "credentials")  # a link out of it
    archive = _write_tar(_merged_files([model]), tmp_path / "model.tar.gz")
    with tarfile.open(archive) as tar:
        assert {m.name: m.isfile() for m in tar.getmembers()} == {"alias.bin": True, "weights.bin": True}
    assert "creds links outside" in capfd.readouterr().err
    unpacked = unpack(archive, tmp_path / "unpacked")  # our own unpacker takes what a job wrote
    assert (unpacked / "alias.bin").read_bytes() == b"weights"
