"""A local job never changes the user's files through a local-folder channel (issue 32): a real job whose script
appends to, truncates, renames, deletes, adds and chmods files under SM_CHANNEL_TRAIN leaves every original file
byte-identical, with its mode — whether the channel is a copy or a read-only view (a real bind mount)."""

from __future__ import annotations

import hashlib
import json
import os
import tarfile
from pathlib import Path

import pytest

from sagelaunch.jobspec.spec import InputChannel
from sagelaunch.launcher.backends import submit
from sagelaunch.launcher.local import channel_views
from tests.local.conftest import make_spec
from tests.local.mounts import btrfs_filesystem


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every entry under root: its content hash (or 'dir'/'link->target') and its mode."""
    found = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            what = "link->" + os.readlink(path)
        elif path.is_dir():
            what = "dir"
        else:
            what = hashlib.sha256(path.read_bytes()).hexdigest()
        found[str(path.relative_to(root))] = (what, info.st_mode)
    return found


def user_folder(tmp_path: Path, *, with_link: bool = True) -> Path:
    data = tmp_path / "user-data"
    (data / "sub").mkdir(parents=True)
    for index in range(6):
        (data / ("sub" if index % 2 else "") / f"part-{index}.bin").write_bytes(os.urandom(1024) * (index + 1))
    outside = tmp_path / "outside.txt"
    outside.write_text("a file a link in the channel leads to")
    if with_link:  # a kept link would lead the job's writes back here
        (data / "link-out.txt").symlink_to(outside)
    return data


def run_vandal(tmp_path: Path, data: Path, **channel) -> dict[str, str]:
    spec = make_spec(entry_point="channel_vandal.py", output_path=str(tmp_path / "out"),
                     inputs=(InputChannel(name="train", uri=str(data), **channel),))
    job = submit(spec, wait=True, logs=False)
    with tarfile.open(job.model_data) as archive:
        return json.loads(archive.extractfile("vandal.json").read())


@pytest.mark.slow
def test_a_job_writing_under_its_copied_channel_leaves_the_users_files_unchanged(tmp_path):
    data = user_folder(tmp_path)
    before = snapshot(data), (tmp_path / "outside.txt").read_bytes()
    done = run_vandal(tmp_path, data)
    assert set(done.values()) == {"ok"}, done  # File mode: a writable copy, as on SageMaker
    assert (snapshot(data), (tmp_path / "outside.txt").read_bytes()) == before


@pytest.mark.slow
def test_a_large_channel_is_a_read_only_view_and_the_users_files_stay_unchanged(tmp_path, monkeypatch):
    if not channel_views.can_mount():
        pytest.skip("this machine does not let a process make a private read-only bind mount (needs root)")
    monkeypatch.setattr(channel_views, "LARGE_CHANNEL_BYTES", 1)  # every channel counts as large
    data = user_folder(tmp_path, with_link=False)
    before = snapshot(data)
    done = run_vandal(tmp_path, data)
    assert set(done.values()) == {"Read-only file system"}, done
    assert snapshot(data) == before
    # a folder with a link is copied, however large: through a read-only view the link would still lead outside
    linked = user_folder(tmp_path / "linked")
    before = snapshot(linked), (tmp_path / "linked" / "outside.txt").read_bytes()
    assert set(run_vandal(tmp_path, linked).values()) == {"ok"}
    assert (snapshot(linked), (tmp_path / "linked" / "outside.txt").read_bytes()) == before
    # the mount lived in the job's own namespace: none is left on this machine
    assert not any(line.split()[4].startswith(str(tmp_path))
                   for line in Path("/proc/self/mountinfo").read_text().splitlines())


@pytest.mark.slow
def test_a_fast_file_channel_is_read_only(tmp_path):
    if not channel_views.can_mount():
        pytest.skip("this machine does not let a process make a private read-only bind mount (needs root)")
    data = user_folder(tmp_path, with_link=False)
    before = snapshot(data)
    done = run_vandal(tmp_path, data, input_mode="FastFile", mode_given=True)
    assert set(done.values()) == {"Read-only file system"}, done
    assert snapshot(data) == before


@pytest.mark.slow
def test_on_a_copy_on_write_filesystem_the_channel_is_a_writable_clone(tmp_path, monkeypatch):
    """User data and job folders on a real btrfs (a loop file): the channel is a FICLONE clone — writable, as File mode
    is, and costing no copy — and the user's files stay byte-identical."""
    with btrfs_filesystem(tmp_path / "btrfs") as cow:
        monkeypatch.setenv("SAGELAUNCH_HOME", str(cow / "home"))
        data = user_folder(cow, with_link=False)
        (cow / "probe").mkdir()
        assert channel_views.choose(data, cow / "probe", fast_file=False) == "clone"
        monkeypatch.setattr(channel_views, "LARGE_CHANNEL_BYTES", 1)  # a clone is chosen before any read-only view
        before = snapshot(data)
        done = run_vandal(cow, data)
        assert set(done.values()) == {"ok"}, done
        assert snapshot(data) == before


def test_a_copied_channel_follows_links_and_never_keeps_one(tmp_path):
    data = user_folder(tmp_path)
    target = tmp_path / "view"
    channel_views.copy_view(data, target, clone=False)
    assert not any(p.is_symlink() for p in target.rglob("*"))
    assert (target / "link-out.txt").read_text() == "a file a link in the channel leads to"
    assert {k: v[0] for k, v in snapshot(target).items()} == {
        k: ("a" if v[0].startswith("link->") else v[0]) for k, v in snapshot(data).items()} | {
        "link-out.txt": hashlib.sha256(b"a file a link in the channel leads to").hexdigest()}
