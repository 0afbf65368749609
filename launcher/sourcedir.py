"""The files of a job's code: `source_dir` (or the lone entry point) minus what must not ship.

Both backends use it — SageMaker uploads the files as sourcedir.tar.gz, the local backend lays
them into each host's `code/` folder — so both ship exactly the same files, by the same rules:

- DEFAULT_IGNORE_PATTERNS never ship (credentials, VCS data, caches); `ignore_patterns` adds more.
- A symlink to a file inside source_dir ships that file's content under the link's name.
- A symlink that points outside source_dir, a symlinked folder and a dangling link are skipped with a
  warning naming them: the target's content is never read (a link to ~/.aws must not leak it).
- A symlink loop is an error naming it, raised while listing — before anything is packed or copied.
"""

from __future__ import annotations

import errno
import fnmatch
import logging
import os
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path

# Never shipped. A pattern matches a file or folder name at any depth, or a path relative to source_dir.
# README ("What never ships") lists the same entries; tests/local/test_sourcedir.py checks each one.
CREDENTIAL_PATTERNS = (
    ".aws", ".ssh", ".gnupg", ".docker", ".kube", ".azure", ".config/gcloud",  # tool credential folders
    ".netrc", "_netrc", ".git-credentials", ".pypirc", ".npmrc", ".pgpass",  # credential files
    ".env", ".env.*", ".envrc",  # environment files (often hold keys)
    "secrets", ".secrets",  # folders named for secrets
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "*.pem", "*.key", "*.p12", "*.pfx",  # private keys
)
OTHER_IGNORED_PATTERNS = (".git", ".hg", ".svn", "__pycache__", "*.pyc", ".ipynb_checkpoints")
DEFAULT_IGNORE_PATTERNS = (*CREDENTIAL_PATTERNS, *OTHER_IGNORED_PATTERNS)
LARGE_CODE_BYTES = 100 * 1024 * 1024  # SageMaker downloads the code on every host before training

log = logging.getLogger("sagelaunch.sourcedir")


def _ignored(rel_path: str, patterns: Iterable[str]) -> bool:
    parts = rel_path.split("/")
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(rel_path, pattern) or any(fnmatch.fnmatch(part, pattern) for part in parts):
            return True
    return False


def symlink_loop(path: Path) -> bool:
    """True when resolving `path` runs in circles (ELOOP), whatever part of it is the loop."""
    try:
        os.stat(path)
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def loop_error(field: str, path: Path | str) -> ValueError:
    return ValueError(f"{field}: {str(path)!r} is a symlink loop (resolving it never ends); "
                      "remove the link or point it at a real file or folder")


def _link_target(path: Path, root: Path, rel: str) -> Path | None:
    """The regular file inside `root` a symlink resolves to; None (with a warning) for any other link."""
    if symlink_loop(path):
        raise loop_error(f"source_dir {str(root)!r}", rel)
    target = Path(os.path.realpath(path))
    shown = f"source_dir: skipped the symlink {rel!r} → {os.readlink(path)!r}"
    if not target.exists():
        log.warning(f"{shown}: its target does not exist")
    elif not target.is_relative_to(root):
        log.warning(f"{shown}: it points outside source_dir, whose content never ships; "
                    "copy the file into source_dir if the job needs it")
    elif target.is_dir():
        log.warning(f"{shown}: symlinked folders are not followed; the folder ships under its own path")
    elif not target.is_file():
        log.warning(f"{shown}: it is not a regular file")
    else:
        return target
    return None


def iter_source_files(
    source_dir: str | os.PathLike | None,
    entry_point: str,
    ignore_patterns: Iterable[str] = (),
    dependencies: Iterable[str] = (),
) -> Iterator[tuple[Path, str]]:
    """Yield (path of the content to ship, archive name) for every file to ship, in a stable order.

    Without a source_dir only the entry point file itself ships, under its base name. Each of
    `dependencies` (the SDK's `dependencies=`) then ships at the root under its base name, as the SDK v2
    lays them out: a file as `<name>`, a folder as `<name>/…`. Raises ValueError for a symlink loop
    (list everything first to fail before doing anything) and for a dependency whose name is taken.
    """
    ignore_patterns = tuple(ignore_patterns)
    names: set[str] = set()
    for path, name in _code_files(source_dir, entry_point, ignore_patterns):
        names.add(name.split("/", 1)[0])
        yield path, name
    for dependency in dependencies:
        top = Path(dependency).name
        if top in names:
            raise ValueError(f"dependencies: {dependency!r} would ship as {top!r}, which the code already holds; "
                             "rename it or drop it from dependencies")
        names.add(top)
        if Path(dependency).is_dir():
            for path, name in _code_files(dependency, "", ignore_patterns):
                yield path, f"{top}/{name}"
        elif Path(dependency).is_file():
            yield Path(dependency).resolve(), top
        else:
            raise ValueError(f"dependencies: {dependency!r} does not exist; pass existing files or folders "
                             "(paths are relative to where you run)")


def _code_files(source_dir: str | os.PathLike | None, entry_point: str,
                ignore_patterns: tuple[str, ...]) -> Iterator[tuple[Path, str]]:
    if source_dir is None:
        if symlink_loop(Path(entry_point)):
            raise loop_error("entry_point", entry_point)
        path = Path(entry_point).resolve()
        yield path, path.name
        return
    if symlink_loop(Path(source_dir)):
        raise loop_error("source_dir", source_dir)
    root = Path(source_dir).resolve()
    patterns = (*DEFAULT_IGNORE_PATTERNS, *ignore_patterns)
    for dirpath, dirnames, filenames in os.walk(root):  # never descends into symlinked folders
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        folders = set(dirnames)
        dirnames[:] = sorted(d for d in dirnames if not _ignored(rel_dir + d, patterns)
                             and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(folders | set(filenames)):
            rel, path = rel_dir + name, Path(dirpath) / name
            if _ignored(rel, patterns):
                continue
            if path.is_symlink():
                target = _link_target(path, root, rel)
                if target is not None:
                    yield target, rel
            elif name not in folders and path.is_file():
                yield path, rel


def list_source_files(source_dir: str | os.PathLike | None, entry_point: str,
                      ignore_patterns: Iterable[str] = (), dependencies: Iterable[str] = ()) -> list[tuple[Path, str]]:
    """Every file to ship, with a warning when together they pass LARGE_CODE_BYTES."""
    files = list(iter_source_files(source_dir, entry_point, ignore_patterns, dependencies))
    warn_if_large(sum(path.stat().st_size for path, _ in files), "the files of source_dir")
    return files


def warn_if_large(size: int, what: str) -> None:
    if size > LARGE_CODE_BYTES:
        log.warning(f"{what}: {size / 2**20:.1f} MB, over {LARGE_CODE_BYTES / 2**20:g} MB — every host copies the "
                    "code before training starts; move data to inputs or add it to ignore_patterns")


def pack_sourcedir(
    source_dir: str | os.PathLike | None,
    entry_point: str,
    destination: str | os.PathLike,
    ignore_patterns: Iterable[str] = (),
    dependencies: Iterable[str] = (),
) -> list[str]:
    """Write sourcedir.tar.gz to `destination`; return the archive names it holds."""
    files = list(iter_source_files(source_dir, entry_point, ignore_patterns, dependencies))  # a loop fails before writing
    with tarfile.open(destination, "w:gz") as archive:
        for path, name in files:
            archive.add(path, arcname=name, recursive=False)  # `path` is never a link: its content is stored
    warn_if_large(Path(destination).stat().st_size, "sourcedir.tar.gz")
    return [name for _, name in files]
