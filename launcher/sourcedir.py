"""The files of a job's code: `source_dir` (or the lone entry point) minus what must not ship.

Both backends use it: SageMaker uploads them as sourcedir.tar.gz, the local backend lays
them into each host's `code/` folder.
"""

from __future__ import annotations

import fnmatch
import os
import tarfile
from collections.abc import Iterable, Iterator
from pathlib import Path

# Never shipped: VCS data, secrets, caches, notebook autosaves.
DEFAULT_IGNORE_PATTERNS = (".git", ".env", "__pycache__", "*.pyc", ".ipynb_checkpoints")


def _ignored(rel_path: str, patterns: Iterable[str]) -> bool:
    parts = rel_path.split("/")
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(rel_path, pattern) or any(fnmatch.fnmatch(part, pattern) for part in parts):
            return True
    return False


def iter_source_files(
    source_dir: str | os.PathLike | None,
    entry_point: str,
    ignore_patterns: Iterable[str] = (),
) -> Iterator[tuple[Path, str]]:
    """Yield (absolute path, archive name) for every file to ship, in a stable order.

    Without a source_dir only the entry point file itself ships, under its base name.
    """
    if source_dir is None:
        path = Path(entry_point).resolve()
        yield path, path.name
        return
    root = Path(source_dir).resolve()
    patterns = (*DEFAULT_IGNORE_PATTERNS, *ignore_patterns)
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        dirnames[:] = sorted(d for d in dirnames if not _ignored(rel_dir + d, patterns))
        for name in sorted(filenames):
            if not _ignored(rel_dir + name, patterns):
                yield Path(dirpath) / name, rel_dir + name


def pack_sourcedir(
    source_dir: str | os.PathLike | None,
    entry_point: str,
    destination: str | os.PathLike,
    ignore_patterns: Iterable[str] = (),
) -> list[str]:
    """Write sourcedir.tar.gz to `destination`; return the archive names it holds."""
    names = []
    with tarfile.open(destination, "w:gz") as archive:
        for path, name in iter_source_files(source_dir, entry_point, ignore_patterns):
            archive.add(path, arcname=name, recursive=False)
            names.append(name)
    return names
