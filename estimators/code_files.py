"""The files of an estimator's code as the user gave them: where the entry point is inside source_dir, and the
check that they exist before a job is submitted (construction reads no files)."""

from __future__ import annotations

import os
from pathlib import Path

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.launcher import loop_error, symlink_loop


def entry_in_source_dir(entry_point: str, source_dir: str) -> str:
    """entry_point relative to a local source_dir (an absolute path inside it is made relative)."""
    if os.path.isabs(entry_point) and not source_dir.startswith("s3://"):
        rel = os.path.relpath(entry_point, os.path.abspath(source_dir))
        if not rel.startswith(".."):
            return rel.replace(os.sep, "/")
    return entry_point


def check_code_files(entry_point: str, source_dir: str | None, dependencies: list[str]) -> None:
    """The local code must exist before a job is submitted."""
    for field, path in (("source_dir", source_dir), ("entry_point", entry_point)):
        if path and "://" not in path and symlink_loop(Path(path)):
            raise loop_error(field, path)
    if source_dir is None:
        if not os.path.isfile(entry_point):
            raise SagelaunchError(f"entry_point={entry_point!r}: no such file (from {os.getcwd()})",
                                  field="entry_point", value=entry_point, allowed="an existing file",
                                  fix=f"check the path (relative to {os.getcwd()})")
    elif not source_dir.startswith("s3://"):
        if not os.path.isdir(source_dir):
            raise SagelaunchError(f"source_dir={source_dir!r}: no such folder", field="source_dir", value=source_dir,
                                  allowed="an existing folder", fix="check the path")
        if not os.path.isfile(os.path.join(source_dir, entry_in_source_dir(entry_point, source_dir))):
            raise SagelaunchError(f"entry_point={entry_point!r}: no such file in source_dir={source_dir!r}",
                                  field="entry_point", value=entry_point, allowed=f"a file in {source_dir!r}",
                                  fix="give the path relative to source_dir")
    for dependency in dependencies:
        if not os.path.exists(dependency):
            raise SagelaunchError(f"dependencies: {dependency!r}: no such file or folder (from {os.getcwd()})",
                                  field="dependencies", value=dependency, allowed="existing files or folders",
                                  fix=f"check the path (relative to {os.getcwd()})")
