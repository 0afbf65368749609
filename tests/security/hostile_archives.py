"""Crafted tar archives, each a known way out of an extraction folder or onto its disk.

Each builder writes `path` and returns the names of files it would create outside the target if it escaped
(relative to the target's parent) so a test can check nothing of them exists.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import tarfile
from pathlib import Path

PAYLOAD = b"written by a hostile archive\n"


def _file(tar: tarfile.TarFile, name: str, data: bytes = PAYLOAD) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    tar.addfile(info, io.BytesIO(data))


def _link(tar: tarfile.TarFile, name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    tar.addfile(info)


def _special(tar: tarfile.TarFile, name: str, kind: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.devmajor, info.devminor = 1, 3  # /dev/null's numbers
    tar.addfile(info)


def _open(path: Path) -> tarfile.TarFile:
    tar = tarfile.open(path, "w:gz", format=tarfile.PAX_FORMAT)
    _file(tar, "config.json", b"{}")  # a harmless member first: the refusal must undo it
    return tar


def dotdot(path: Path, target: Path) -> str:
    with _open(path) as tar:
        _file(tar, "../escaped-dotdot.txt")
    return "escaped-dotdot.txt"


def absolute(path: Path, target: Path) -> str:
    with _open(path) as tar:
        _file(tar, str(target.parent / "escaped-absolute.txt"))
    return "escaped-absolute.txt"


def symlink_then_write(path: Path, target: Path) -> str:
    with _open(path) as tar:
        _link(tar, "out", "..")
        _file(tar, "out/escaped-through-link.txt")
    return "escaped-through-link.txt"


def hardlink(path: Path, target: Path) -> str:
    """A hard link to a file outside, then content written through it (overwrites the outside file)."""
    with _open(path) as tar:
        _link(tar, "victim", "../victim.txt", tarfile.LNKTYPE)
        _file(tar, "victim", b"overwritten\n")
    return "victim.txt"


def symlink_chain(path: Path, target: Path) -> str:
    """CVE-2025-4517: links whose expansion passes PATH_MAX, so os.path.realpath stops expanding and
    tarfile's data filter believes the last link stays inside; a file is then written through it."""
    steps = "abcdefghijklmnop"
    path_max = os.pathconf(target.parent, "PC_PATH_MAX")
    component = "d" * ((path_max - len(str(target)) - 1) // (len(steps) + 1))
    with _open(path) as tar:
        deep = ""
        for step in steps:
            info = tarfile.TarInfo(os.path.join(deep, component))
            info.type, info.mode = tarfile.DIRTYPE, 0o777
            tar.addfile(info)
            _link(tar, os.path.join(deep, step), component)
            deep = os.path.join(deep, component)
        long_link = os.path.join(*steps, "l" * 254)
        _link(tar, long_link, os.path.join(*[".."] * len(steps)))
        _link(tar, "escape", os.path.join(long_link, ".."))
        _file(tar, "escape/escaped-chain.txt")
    return "escaped-chain.txt"


def device(path: Path, target: Path) -> str:
    with _open(path) as tar:
        _special(tar, "null", tarfile.CHRTYPE)
    return "null"


def fifo(path: Path, target: Path) -> str:
    with _open(path) as tar:
        _special(tar, "pipe", tarfile.FIFOTYPE)
    return "pipe"


HOSTILE = {"dotdot": dotdot, "absolute": absolute, "symlink": symlink_then_write, "hardlink": hardlink,
           "symlink-chain": symlink_chain, "device": device, "fifo": fifo}
# what the one error line says for each
REASONS = {"dotdot": "leaves the extraction folder", "absolute": "leaves the extraction folder",
           "symlink": "is a symlink", "hardlink": "is a hard link", "symlink-chain": "is a symlink",
           "device": "is a device file", "fifo": "is a FIFO"}


def zero_bomb(path: Path, size: int) -> None:
    """One member of `size` zero bytes: gzip squeezes it about 1000:1."""
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("weights.bin")
        info.size = size
        tar.addfile(info, _Zeros(size))


class _Zeros(io.RawIOBase):
    def __init__(self, size: int):
        self.left = size

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n

    def read(self, size: int = -1) -> bytes:
        n = self.left if size < 0 else min(size, self.left)
        self.left -= n
        return bytes(n)


def sparse(path: Path, folder: Path, apparent_bytes: int = 10 * 2**30) -> None:
    """GNU tar's --sparse form of a 10 GiB file of holes: a few hundred bytes compressed."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "holes.bin", "wb") as handle:
        handle.truncate(apparent_bytes)
    tar = subprocess.run(["tar", "--sparse", "-cf", "-", "-C", str(folder), "holes.bin"], capture_output=True,
                         check=True).stdout
    path.write_bytes(gzip.compress(tar))
    (folder / "holes.bin").unlink()
