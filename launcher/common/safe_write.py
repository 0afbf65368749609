"""Files written whole and kept private.

A file appears under its final name only once it is complete (written under a temporary name in the same folder,
then renamed, which is atomic): a full disk or a killed process leaves no truncated model.tar.gz that looks
finished. What holds a job's settings — hyperparameters and environment, which may carry secrets — lives in folders
only their owner can enter (0700) and files only their owner can read (0600).
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PRIVATE_FOLDER, PRIVATE_FILE = 0o700, 0o600


def private_folder(path: Path) -> Path:
    """`path` as a folder only its owner can enter (created with its parents when missing; tightened when not)."""
    path.mkdir(mode=PRIVATE_FOLDER, parents=True, exist_ok=True)
    if stat.S_IMODE(path.stat().st_mode) != PRIVATE_FOLDER:
        path.chmod(PRIVATE_FOLDER)
    return path


def private_file(path: Path) -> Path:
    """`path` exists, readable by its owner only (created empty when missing, as SQLite's files inherit its mode).

    An existing file is only chmod-ed, never opened: closing any descriptor of a file drops every POSIX lock this
    process holds on it, and SQLite's locks on an open database are such locks."""
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE))
    except FileExistsError:
        pass
    if stat.S_IMODE(path.stat().st_mode) != PRIVATE_FILE:
        path.chmod(PRIVATE_FILE)
    return path


@contextmanager
def complete_file(path: Path, mode: int = 0o666, *, replace: bool = True) -> Iterator[Path]:
    """Yield a new, empty temporary file beside `path` (created with `mode` less the umask); when the block succeeds
    it becomes `path` (os.replace), else it is removed. With replace=False an existing `path` is never replaced:
    the new file is linked in under its name (atomic, FileExistsError when the name is taken meanwhile)."""
    partial = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}.partial")
    os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, mode))
    try:
        yield partial
        if replace:
            os.replace(partial, path)
        else:
            os.link(partial, path)
            partial.unlink()
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def write_private_text(path: Path, text: str) -> Path:
    """Write `text` to `path` whole, readable by its owner only."""
    with complete_file(path, PRIVATE_FILE) as partial:
        partial.write_text(text, encoding="utf-8")
    return path
