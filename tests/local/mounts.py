"""Small filesystems, read-only folders and immutable files for tests, made with real mounts and `chattr +i` (tests
run as root, which ignores permission bits, so chmod cannot make a folder read-only for them)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _mount(*args: str) -> None:
    try:
        done = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        pytest.skip("mount is not installed")
    if done.returncode != 0:
        pytest.skip(f"cannot mount here (needs root with CAP_SYS_ADMIN): mount {' '.join(args)}: "
                    f"{done.stderr.strip()}")


def _unmount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)  # lazy: a job may hold files open


@contextmanager
def small_filesystem(path: Path, size: str) -> Iterator[Path]:
    """A tmpfs of `size` (e.g. '1m') mounted at `path` while the block runs."""
    path.mkdir(parents=True, exist_ok=True)
    _mount("-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path))
    try:
        yield path
    finally:
        _unmount(path)


@contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """`path` (a folder) read-only while the block runs: a read-only bind mount of itself."""
    _mount("--bind", str(path), str(path))
    try:
        done = subprocess.run(["mount", "-o", "remount,bind,ro", str(path)], capture_output=True, text=True,
                              timeout=30)
        if done.returncode != 0:
            pytest.skip(f"cannot remount {path} read-only: {done.stderr.strip()}")
        yield path
    finally:
        _unmount(path)


@contextmanager
def immutable(path: Path) -> Iterator[Path]:
    """`path` immutable while the block runs (`chattr +i`: even writes to it through open files fail)."""
    try:
        done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, text=True, timeout=30)
    except FileNotFoundError:
        pytest.skip("chattr is not installed (e2fsprogs)")
    if done.returncode != 0:
        pytest.skip(f"cannot make {path} immutable here: chattr +i: {done.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["chattr", "-i", str(path)], capture_output=True, timeout=30)


@contextmanager
def btrfs_filesystem(path: Path, size: str = "256M") -> Iterator[Path]:
    """A btrfs filesystem (copy-on-write clones: FICLONE) in a loop file, mounted at `path` while the block runs."""
    import shutil

    if shutil.which("mkfs.btrfs") is None:
        pytest.skip("mkfs.btrfs is not installed (btrfs-progs)")
    image = path.with_name(path.name + ".img")
    subprocess.run(["truncate", "-s", size, str(image)], check=True, timeout=30)
    done = subprocess.run(["mkfs.btrfs", "-q", str(image)], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        pytest.skip(f"cannot make a btrfs filesystem here: {done.stderr.strip()}")
    path.mkdir(parents=True, exist_ok=True)
    _mount("-o", "loop", str(image), str(path))
    try:
        yield path
    finally:
        _unmount(path)
        image.unlink(missing_ok=True)
