"""A local-folder channel as the job sees it: never a way to change the user's files.

On SageMaker a File-mode channel is a copy and a FastFile channel is read-only: the source is never touched. Here:
- a copy-on-write clone (FICLONE, as `cp --reflink`) where the filesystem has one: no data copied, writes stay in
  the job's folder;
- a read-only bind mount of the source, for FastFile channels and for folders of LARGE_CHANNEL_BYTES or more, when
  this process may mount (root with CAP_SYS_ADMIN): the supervisor mounts it in its own mount namespace, so the
  mount ends with the job's last process even when the job is killed;
- otherwise a full copy (also for a folder holding symbolic links: through a read-only view a link still leads to
  its target, read-write).
Hard links are never used: a write through a hard link changes the original.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Literal

from sagelaunch.launcher.local.path_errors import with_path

LARGE_CHANNEL_BYTES = 256 * 1024 * 1024  # above this a File-mode channel is a read-only view, not a copy
FICLONE = 0x40049409  # linux/fs.h: _IOW(0x94, 9, int)

Strategy = Literal["clone", "read-only", "copy"]


def tree_bytes(source: Path) -> tuple[int, bool]:
    """The bytes of the files under `source`, and whether it holds a symbolic link (a read-only view would show
    the link, and a write through it would reach the file it names, read-write)."""
    if source.is_file():
        return source.stat().st_size, False
    total, links = 0, False
    for entry in source.rglob("*"):
        if entry.is_symlink():
            links = True
        elif entry.is_file():
            total += entry.stat().st_size
    return total, links


def _clone_file(source: str, target: str) -> None:
    """One file as a copy-on-write clone; OSError(EOPNOTSUPP/EXDEV/EINVAL) where the filesystem cannot."""
    with open(source, "rb") as src, open(target, "wb") as dst:
        fcntl.ioctl(dst.fileno(), FICLONE, src.fileno())
    shutil.copystat(source, target)


def can_clone(source: Path, target_dir: Path) -> bool:
    """Whether a file of `source`'s filesystem clones into `target_dir` (tried on a real file, then removed)."""
    sample = source if source.is_file() else next((p for p in source.rglob("*") if p.is_file()), None)
    if sample is None:
        return False
    probe = target_dir / f".clone-probe-{os.getpid()}"
    try:
        _clone_file(str(sample), str(probe))
        return True
    except OSError:
        return False
    finally:
        probe.unlink(missing_ok=True)


@cache
def can_mount() -> bool:
    """Whether this machine lets a job's supervisor make a private mount namespace with a read-only bind."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    try:
        done = subprocess.run(["unshare", "--mount", "--propagation", "slave", "mount", "--bind", "-o", "ro",
                               "/", "/"], capture_output=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def choose(source: Path, target_dir: Path, *, fast_file: bool) -> Strategy:
    if can_clone(source, target_dir) and not fast_file:
        return "clone"
    size, links = tree_bytes(source)
    if (fast_file or size >= LARGE_CHANNEL_BYTES) and not links and can_mount():
        return "read-only"
    return "copy"


def _copy_file(source: str, target: str, *, clone: bool) -> str:
    try:
        if clone:
            _clone_file(source, target)
        else:
            shutil.copy2(source, target)
    except OSError as error:  # a full disk fails in sendfile, which names no file
        raise with_path(error, Path(target)) from error
    return target


def copy_view(source: Path, target: Path, *, clone: bool) -> None:
    """`target` becomes a copy (or a copy-on-write clone) of `source`; links inside it are followed, never kept
    (a kept link would lead a write back to the user's file)."""
    if source.is_file():
        _copy_file(str(source), str(target), clone=clone)
        return
    shutil.copytree(source, target, symlinks=False,
                    copy_function=lambda s, t: _copy_file(s, t, clone=clone))


def bind_read_only(source: Path, target: Path) -> None:
    """In this process's own mount namespace (made by enter_private_mounts): `target` shows `source`, read-only."""
    for args in (["--bind", str(source), str(target)], ["-o", "remount,bind,ro", str(target)]):
        done = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=60)
        if done.returncode != 0:
            raise OSError(errno.EPERM, f"cannot mount {source} read-only at {target}: {done.stderr.strip()}")


def enter_private_mounts() -> None:
    """Give this (single-threaded) process a mount namespace of its own: its mounts vanish when it and its children
    have all exited, however they end, and never reach the machine's. As a *slave* of the machine's mounts it still
    sees what is mounted there later (an output folder remounted read-only, a network drive), as the job would."""
    libc = ctypes.CDLL(None, use_errno=True)
    clone_newns, ms_rec, ms_slave = 0x00020000, 16384, 1 << 19
    if libc.unshare(clone_newns) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"cannot make a private mount namespace: {os.strerror(code)}")
    if libc.mount(b"none", b"/", None, ms_rec | ms_slave, None) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"cannot make mounts private: {os.strerror(code)}")
