"""The one packing rule for code that leaves the machine: `source_dir` (or the lone entry point) and
`dependencies`, minus what must not ship.

Everything that ships code uses it — SageMaker's sourcedir.tar.gz, the local backend's `code/` folders,
deploy's repack of model.tar.gz (code/, code/lib/), a `git_config` clone's files — and `package` and deploy
use it for a model's own files, by the same rules:

- DEFAULT_IGNORE_PATTERNS never ship (credentials, VCS data, caches); `ignore_patterns` adds more.
- A source_dir or dependency that is itself a credential or VCS folder or file (`~/.aws`, `id_rsa`,
  `server.pem`, `.git`) is refused by name: it was asked for, and it cannot ship.
- A symlink to a file inside its folder ships that file's content under the link's name.
- A symlink that points outside its folder, a symlinked folder and a dangling link are skipped: the
  target's content is never read (a link to ~/.aws must not leak it).
- What was left out for being a credential, VCS data or a link is listed in one warning.
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

from sagelaunch.jobspec.errors import SagelaunchError

# Never shipped. A pattern matches a file or folder name at any depth, or a path relative to source_dir.
# README ("What never ships") lists the same entries; tests/local/test_sourcedir.py checks each one.
CREDENTIAL_PATTERNS = (
    ".aws", ".ssh", ".gnupg", ".docker", ".kube", ".azure", ".config/gcloud",  # tool credential folders
    ".netrc", "_netrc", ".git-credentials", ".pypirc", ".npmrc", ".pgpass",  # credential files
    ".env", ".env.*", ".envrc",  # environment files (often hold keys)
    "secrets", ".secrets",  # folders named for secrets
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "*.pem", "*.key", "*.p12", "*.pfx",  # private keys
)
VCS_PATTERNS = (".git", ".hg", ".svn")
CACHE_PATTERNS = ("__pycache__", "*.pyc", ".ipynb_checkpoints")  # left out without a word
DEFAULT_IGNORE_PATTERNS = (*CREDENTIAL_PATTERNS, *VCS_PATTERNS, *CACHE_PATTERNS)
LARGE_CODE_BYTES = 100 * 1024 * 1024  # SageMaker downloads the code on every host before training

log = logging.getLogger("sagelaunch.sourcedir")


def _ignored(rel_path: str, patterns: Iterable[str]) -> str | None:
    """The first pattern matching the path or any of its parts (None: it ships)."""
    parts = rel_path.split("/")
    for pattern in patterns:
        pattern = pattern.rstrip("/")
        if fnmatch.fnmatch(rel_path, pattern) or any(fnmatch.fnmatch(part, pattern) for part in parts):
            return pattern
    return None


def _kind(pattern: str | None) -> str | None:
    """What a default pattern guards against, as the warning names it (None: left out silently)."""
    if pattern in CREDENTIAL_PATTERNS:
        return "credentials"
    if pattern in VCS_PATTERNS:
        return "version control data"
    return None


class LeftOut:
    """What one listing left out that the user may have expected to ship, warned about once."""

    def __init__(self, field: str):
        self.field = field
        self.entries: list[str] = []
        self.links_out: list[str] = []

    def add(self, entry: str, link_out: str | None = None) -> None:
        self.entries.append(entry)
        if link_out is not None:
            self.links_out.append(link_out)

    def warn(self) -> None:
        if self.entries:
            log.warning(f"{self.field}: left out {len(self.entries)} path(s) that never ship: "
                        + "; ".join(self.entries))
            self.entries = []


def refuse_credential_root(field: str, path: str | os.PathLike) -> None:
    """A folder or file given to ship that is itself credentials or VCS data (by its name or its link's target)."""
    names = {Path(path).name, Path(os.path.realpath(path)).name}
    for name in sorted(names):
        pattern = _ignored(name, (*CREDENTIAL_PATTERNS, *VCS_PATTERNS))
        if pattern is not None:
            raise SagelaunchError(f"{field}: {str(path)!r} is {_kind(pattern)} (matches {pattern!r}), which never "
                                  "ships; pass the folder or files the job needs, without credentials", field=field,
                                  value=str(path), allowed=f"paths that do not match {pattern!r}",
                                  fix="pass the folder or files the job needs, without credentials")


def symlink_loop(path: Path) -> bool:
    """True when resolving `path` runs in circles (ELOOP), whatever part of it is the loop."""
    try:
        os.stat(path)
    except OSError as error:
        return error.errno == errno.ELOOP
    return False


def loop_error(field: str, path: Path | str) -> SagelaunchError:
    fix = "remove the link or point it at a real file or folder"
    return SagelaunchError(f"{field}: {str(path)!r} is a symlink loop (resolving it never ends); {fix}", field=field,
                           value=str(path), allowed="a path that resolves", fix=fix)


def _link_target(path: Path, root: Path, rel: str, left_out: LeftOut, where: str) -> Path | None:
    """The regular file inside `root` (`where`, as the warning names it) a symlink resolves to; None (noted in
    `left_out`) for any other link."""
    if symlink_loop(path):
        raise loop_error(f"{where} {str(root)!r}", rel)
    target = Path(os.path.realpath(path))
    shown = f"the symlink {rel!r} → {os.readlink(path)!r}"
    if not target.exists():
        left_out.add(f"{shown}: its target does not exist")
    elif not target.is_relative_to(root):
        left_out.add(f"{shown}: it points outside {where}, whose content never ships; copy the file "
                     f"into {where} if the job needs it", link_out=rel)
    elif target.is_dir():
        left_out.add(f"{shown}: symlinked folders are not followed; the folder ships under its own path")
    elif not target.is_file():
        left_out.add(f"{shown}: it is not a regular file")
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
    lays them out: a file as `<name>`, a folder as `<name>/…`. Raises ValueError for a symlink loop (list
    everything first to fail before doing anything), for a credential folder or file given to ship and for
    a dependency whose name is taken. What was left out is warned about once, when the listing ends.
    """
    ignore_patterns = tuple(ignore_patterns)
    left_out = LeftOut("source_dir" if source_dir is not None else "entry_point")
    names: list[str] = []
    for path, name in code_files(source_dir, entry_point, ignore_patterns, left_out):
        names.append(name)
        yield path, name
    yield from dependency_files(dependencies, ignore_patterns, names, left_out)
    left_out.warn()


def dependency_files(dependencies: Iterable[str], ignore_patterns: tuple[str, ...] = (), taken: Iterable[str] = (),
                     left_out: LeftOut | None = None, under: str = "") -> Iterator[tuple[Path, str]]:
    """The files of each dependency under `under`/<its base name> (v2: the root of sourcedir.tar.gz, or lib/
    in a repacked model's code/); a name `taken` by the code is refused."""
    own = left_out is None
    left_out = left_out or LeftOut("dependencies")
    taken = list(taken)
    for dependency in dependencies:
        top = f"{under}/{Path(dependency).name}" if under else Path(dependency).name
        if any(name == top or name.startswith(top + "/") for name in taken):
            raise SagelaunchError(f"dependencies: {dependency!r} would ship as {top!r}, which the code already holds; "
                                  "rename it or drop it from dependencies", field="dependencies", value=dependency,
                                  allowed="names the code does not hold", fix="rename it or drop it from dependencies")
        taken.append(top)
        refuse_credential_root("dependencies", dependency)
        if symlink_loop(Path(dependency)):
            raise loop_error("dependencies", dependency)
        if Path(dependency).is_dir():
            for path, name in _walk(Path(dependency).resolve(), ignore_patterns, left_out,
                                    f"the dependency {str(dependency)!r}", f"{top}/"):
                yield path, f"{top}/{name}"
        elif Path(dependency).is_file():
            yield Path(dependency).resolve(), top
        else:
            raise SagelaunchError(f"dependencies: {dependency!r} does not exist; pass existing files or folders "
                                  "(paths are relative to where you run)", field="dependencies", value=dependency,
                                  allowed="existing files or folders", fix="paths are relative to where you run")
    if own:
        left_out.warn()


def folder_files(folder: str | os.PathLike, field: str) -> list[tuple[Path, str]]:
    """Every file of `folder` that may leave the machine (a model's files), by the rules above; what was left
    out is one warning naming `field`. A file that is a link out of the folder is refused, not left out: a
    model without its weights must not ship (a Hugging Face cache snapshot links every file to ../../blobs)."""
    if symlink_loop(Path(folder)):
        raise loop_error(field, Path(folder))
    left_out = LeftOut(field)
    files = list(_walk(Path(folder).resolve(), (), left_out, field))
    if left_out.links_out:
        shown = ", ".join(repr(rel) for rel in left_out.links_out[:5])
        raise SagelaunchError(f"{field}: {len(left_out.links_out)} file(s) are symlinks out of the folder ({shown}), "
                              "whose content never ships; copy the files into a folder of their own "
                              "(cp -rL MODEL COPY) and pass that folder", field=field, value=left_out.links_out,
                              allowed="files inside the folder",
                              fix="copy the files into a folder of their own (cp -rL MODEL COPY) and pass that folder")
    left_out.warn()
    return files


def code_files(source_dir: str | os.PathLike | None, entry_point: str, ignore_patterns: tuple[str, ...] = (),
               left_out: LeftOut | None = None) -> Iterator[tuple[Path, str]]:
    """The files of source_dir (or the lone entry point) by the rules above; `left_out` collects the skipped."""
    if source_dir is None:
        if symlink_loop(Path(entry_point)):
            raise loop_error("entry_point", entry_point)
        refuse_credential_root("entry_point", entry_point)
        path = Path(entry_point).resolve()
        yield path, path.name
        return
    if symlink_loop(Path(source_dir)):
        raise loop_error("source_dir", os.fspath(source_dir))
    refuse_credential_root("source_dir", source_dir)
    yield from _walk(Path(source_dir).resolve(), ignore_patterns, left_out or LeftOut("source_dir"), "source_dir")


def _walk(root: Path, ignore_patterns: tuple[str, ...], left_out: LeftOut, where: str,
          shown_under: str = "") -> Iterator[tuple[Path, str]]:
    patterns = (*DEFAULT_IGNORE_PATTERNS, *ignore_patterns)
    for dirpath, dirnames, filenames in os.walk(root):  # never descends into symlinked folders
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        folders = set(dirnames)
        dirnames[:] = sorted(d for d in dirnames if not _ignored(rel_dir + d, patterns)
                             and not os.path.islink(os.path.join(dirpath, d)))
        for name in sorted(folders | set(filenames)):
            rel, path = rel_dir + name, Path(dirpath) / name
            pattern = _ignored(rel, patterns)
            if pattern is not None:
                if _kind(pattern) and pattern not in ignore_patterns:
                    left_out.add(f"{shown_under + rel!r} ({_kind(pattern)})")
                continue
            if path.is_symlink():
                target = _link_target(path, root, shown_under + rel, left_out, where)
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
