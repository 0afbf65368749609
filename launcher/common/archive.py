"""The one way sagelaunch unpacks an archive it did not write (model.tar.gz, sourcedir.tar.gz).

tarfile's `filter="data"` is not enough on the Pythons we support (CVE-2025-4517: a chain of symlinks longer
than PATH_MAX makes its path check pass while the write lands outside), and it bounds no sizes. A model or
code archive needs nothing but files and folders, so this unpacker writes only those:

- regular files and directories; symlinks, hard links, devices, FIFOs and sparse members are refused;
- every name is a relative path without `..` and is created one folder at a time under the target, never
  through an existing link (files opened with O_NOFOLLOW), so nothing can land outside it;
- a size budget per member and in total, counted on the bytes actually written, and a bound on how much
  larger than the archive the content may be (a bomb stops at the budget, not at a full disk);
- a refusal is one line naming the archive, the member and why; what the unpacker wrote is removed.
"""

from __future__ import annotations

import os
import stat
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from sagelaunch.jobspec.errors import SagelaunchError

GiB = 2**30
# Generous: a large language model's weights fit; a 1 MB archive can still not fill a disk.
MAX_TOTAL_ENV, MAX_MEMBER_ENV, MAX_RATIO_ENV = ("SAGELAUNCH_UNPACK_MAX_BYTES", "SAGELAUNCH_UNPACK_MAX_MEMBER_BYTES",
                                                "SAGELAUNCH_UNPACK_MAX_RATIO")
DEFAULT_MAX_TOTAL_BYTES = 256 * GiB
DEFAULT_MAX_MEMBER_BYTES = 64 * GiB
# Weights compress about 1.1:1 and text about 5:1; gzip's most is about 1000:1 (zeros).
DEFAULT_MAX_RATIO = 200
RATIO_ALLOWANCE_BYTES = 16 * 2**20  # small archives may always expand this far
CHUNK = 1 << 20


class UnsafeArchiveError(SagelaunchError):
    """An archive member sagelaunch will not write (the message is one line naming it)."""


@dataclass(frozen=True)
class UnpackLimits:
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES
    max_member_bytes: int = DEFAULT_MAX_MEMBER_BYTES
    max_ratio: float = DEFAULT_MAX_RATIO

    @classmethod
    def from_environment(cls) -> "UnpackLimits":
        """The defaults, each replaced by its SAGELAUNCH_UNPACK_* variable when set."""
        return cls(int(_env_number(MAX_TOTAL_ENV, DEFAULT_MAX_TOTAL_BYTES, int)),
                   int(_env_number(MAX_MEMBER_ENV, DEFAULT_MAX_MEMBER_BYTES, int)),
                   _env_number(MAX_RATIO_ENV, DEFAULT_MAX_RATIO, float))

    def total_budget(self, archive_bytes: int) -> tuple[int, str]:
        """(bytes the whole content may take, the variable that raises it)."""
        by_ratio = int(archive_bytes * self.max_ratio) + RATIO_ALLOWANCE_BYTES
        if by_ratio < self.max_total_bytes:
            return by_ratio, f"{MAX_RATIO_ENV} (now {self.max_ratio:g}x the archive's size)"
        return self.max_total_bytes, MAX_TOTAL_ENV


def _env_number(name: str, default: int | float, kind: type) -> int | float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = -1
    if value <= 0:
        raise SagelaunchError(f"{name}={raw!r} is not a positive number; allowed: a {kind.__name__} above 0 "
                              f"(default {default}), or unset the variable", field=name, value=raw,
                              allowed=f"a {kind.__name__} above 0", fix="unset the variable")
    return value


def member_parts(name: str) -> list[str] | None:
    """The path parts of a member name below the target; None when it would leave it (absolute, `..`)."""
    if name.startswith("/") or "\x00" in name:
        return None
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if any(part == ".." for part in parts):
        return None
    return parts


def _why_refused(member: tarfile.TarInfo) -> str | None:
    if member.issym():
        return f"it is a symlink (→ {member.linkname!r}); a model or code archive holds only files and folders"
    if member.islnk():
        return f"it is a hard link (→ {member.linkname!r}); a model or code archive holds only files and folders"
    if member.ischr() or member.isblk():
        return "it is a device file; a model or code archive holds only files and folders"
    if member.isfifo():
        return "it is a FIFO; a model or code archive holds only files and folders"
    if member.issparse():
        return "it is a sparse file (its holes would expand on disk); repack it without --sparse"
    if not (member.isreg() or member.isdir()):
        return f"its type {member.type!r} is not a regular file or folder"
    parts = member_parts(member.name)
    if parts is None:
        return "its path leaves the extraction folder (absolute or with '..'); repack it with relative paths"
    if not parts and member.isreg():
        return "a file needs a name"
    return None


class _Unpacking:
    """One extraction: its target, what it created (removed again if it fails) and its budget."""

    def __init__(self, archive: Path, target: Path, limits: UnpackLimits):
        self.archive, self.root, self.limits = archive, target, limits
        self.created: list[Path] = []
        self.written = 0
        self.budget, self.budget_variable = limits.total_budget(archive.stat().st_size)

    def refuse(self, member: str, why: str) -> UnsafeArchiveError:
        return UnsafeArchiveError(f"{self.archive}: member {member!r} refused: {why}")

    def folder(self, parts: list[str], member: str) -> Path:
        """Create (or enter) each folder of `parts` under the target; an existing link is never followed."""
        path = self.root
        for part in parts:
            path = path / part
            try:
                os.mkdir(path, 0o755)
                self.created.append(path)
            except FileExistsError:
                if not stat.S_ISDIR(os.lstat(path).st_mode):  # lstat: a symlink to a folder is not a folder
                    raise self.refuse(member, f"{path.relative_to(self.root).as_posix()!r} is already there and "
                                      "is not a folder") from None
        return path

    def file(self, tar: tarfile.TarFile, member: tarfile.TarInfo, parts: list[str]) -> None:
        name = member.name
        if member.size > self.limits.max_member_bytes:
            raise self.refuse(name, self._over(member.size, self.limits.max_member_bytes, MAX_MEMBER_ENV))
        path = self.folder(parts[:-1], name) / parts[-1]
        source = tar.extractfile(member)
        if source is None:  # only regular files reach here (_why_refused); tarfile gives None for the others
            raise self.refuse(name, "it holds no file data")
        mode = 0o755 if member.mode & 0o100 else 0o644
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
        except OSError as error:  # ELOOP: the name is an existing link; EISDIR: a folder
            raise self.refuse(name, f"cannot write it ({error.strerror})") from None
        self.created.append(path)
        size = 0
        with os.fdopen(fd, "wb") as out:
            while chunk := source.read(CHUNK):
                size += len(chunk)
                self.written += len(chunk)
                if size > self.limits.max_member_bytes:  # counted on what is written, not on the header
                    raise self.refuse(name, self._over(size, self.limits.max_member_bytes, MAX_MEMBER_ENV))
                if self.written > self.budget:
                    raise self.refuse(name, "the archive's content passes its budget: "
                                      + self._over(self.written, self.budget, self.budget_variable))
                out.write(chunk)
        os.chmod(path, mode)
        os.utime(path, (member.mtime, member.mtime))

    @staticmethod
    def _over(size: int, limit: int, variable: str) -> str:
        return (f"{size:,} bytes is over the limit of {limit:,} bytes; if the archive is trusted, raise {variable}")

    def undo(self) -> None:
        for path in reversed(self.created):  # files before the folders holding them
            try:
                if path.is_dir() and not path.is_symlink():
                    os.rmdir(path)
                else:
                    path.unlink()
            except OSError:
                pass  # already gone (a member written twice)


def unpack(archive: str | os.PathLike, target: str | os.PathLike, limits: UnpackLimits | None = None) -> Path:
    """Extract `archive` (tar, any compression) into `target` by the rules above; return `target`.

    Raises UnsafeArchiveError (a ValueError) naming the member for anything refused, and for an archive that
    cannot be read; then nothing it wrote is left behind.
    """
    archive, target = Path(archive), Path(target)
    limits = limits or UnpackLimits.from_environment()
    target.mkdir(parents=True, exist_ok=True)
    job = _Unpacking(archive, Path(os.path.realpath(target)), limits)
    try:
        with tarfile.open(archive, "r:*") as tar:
            for member in tar:  # one header at a time: a refusal comes before any later member is read
                why = _why_refused(member)
                if why:
                    raise job.refuse(member.name, why)
                parts = member_parts(member.name)
                if parts is None:  # _why_refused refused it already; kept for the type
                    raise job.refuse(member.name, "its name leaves the target folder")
                if member.isdir():
                    job.folder(parts, member.name)
                else:
                    job.file(tar, member, parts)
    except UnsafeArchiveError:
        job.undo()
        raise
    except (tarfile.TarError, EOFError, zlib.error, OSError) as error:
        job.undo()
        detail = " ".join((getattr(error, "strerror", None) or str(error) or type(error).__name__).split())
        raise UnsafeArchiveError(f"{archive}: cannot be unpacked ({detail}); pass a tar or tar.gz archive "
                                 "such as a job's model.tar.gz") from None
    return target
