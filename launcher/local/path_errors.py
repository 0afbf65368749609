"""A file error of a local job → one line naming the path, the setting that chose it, and a fix.

`repr(PermissionError)` drops the file name (`PermissionError(1, 'Operation not permitted')`), and a write to an
already open file raises one without any: every place that reports such an error goes through here instead.
"""

from __future__ import annotations

import errno
from pathlib import Path

FIXES = {
    errno.EACCES: "make it writable for you",
    errno.EPERM: "make it writable (chmod u+w; chattr -i where a file or folder is immutable)",
    errno.EROFS: "the filesystem is read-only: remount it read-write or choose another folder",
    errno.ENOSPC: "the disk is full: free space there or choose another folder",
    errno.EDQUOT: "the disk quota is used up: free space there or choose another folder",
}

WRITE_ERRORS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)


def with_path(error: OSError, path: str | Path) -> OSError:
    """The same error, carrying `path` when it had none (a write to an open file)."""
    if error.filename is not None:
        return error
    return type(error)(error.errno, error.strerror, str(path))


def path_error_text(error: BaseException, places: list[tuple[str, Path]]) -> str:
    """`field 'folder': cannot write 'path': strerror (errno) — fix`; `places` are (setting, folder), most specific
    first."""
    if not isinstance(error, OSError) or error.filename is None:
        return f"{type(error).__name__}: {error}"
    # a copy's error names source and destination (shutil: filename, filename2); a full or read-only disk is the
    # destination's
    written = error.filename2 if error.filename2 is not None and error.errno in WRITE_ERRORS else error.filename
    path = Path(str(written))
    field, folder = next(((f, p) for f, p in places if path == p or p in path.parents), ("path", path.parent))
    fix = FIXES.get(error.errno or 0, "check that folder")
    return (f"{field} {str(folder)!r}: cannot write {str(path)!r}: {error.strerror} (errno {error.errno}) — {fix}, "
            "then run the job again")


def job_places(job_dir: Path, artifact_prefix: str) -> list[tuple[str, Path]]:
    """Where a local job writes, and the setting that decides each place."""
    places = []
    if not artifact_prefix.startswith("s3://") and Path(artifact_prefix) != job_dir / "artifacts":
        places.append(("output_path", Path(artifact_prefix).parent))  # the prefix is <output_path>/<job name>
    places.append(("job folder (under SAGELAUNCH_HOME)", job_dir))
    return places
