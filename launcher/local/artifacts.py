"""After a local job: model/ → model.tar.gz, output/data → output.tar.gz, profiler files → profiler/<host>/….

Everything lands under the job's artifact prefix: `<output_path>/<job>/` (a folder, or s3://
uploaded with boto3), or `<job folder>/artifacts/` when the spec has no output_path.
"""

from __future__ import annotations

import shutil
import sys
import tarfile
from pathlib import Path
from urllib.parse import unquote, urlparse

from sagelaunch.launcher.contract import HostLayout
from sagelaunch.launcher.aws import s3 as aws_s3
from sagelaunch.launcher.local import s3
from sagelaunch.launcher.safe_write import complete_file


def artifact_prefix(output_path: str | None, job_name: str, job_dir: Path) -> str:
    if not output_path:
        return str(job_dir / "artifacts")
    if output_path.startswith("s3://"):
        return f"{output_path.rstrip('/')}/{job_name}"
    if output_path.startswith("file://"):
        output_path = unquote(urlparse(output_path).path)
    return str(Path(output_path).expanduser().resolve() / job_name)


def join(prefix: str, *parts: str) -> str:
    if prefix.startswith("s3://"):
        return "/".join([prefix.rstrip("/"), *parts])
    return str(Path(prefix, *parts))


def _merged_files(folders: list[Path]) -> dict[str, Path]:
    """archive name → file; earlier folders win (algo-1's model is the model). A link is stored as the content of
    the file it points to when that file is inside the same folder (our unpacker, like a model server, takes no
    links); a link out of the folder is left out, named on stderr (the supervisor's log): nothing outside ships."""
    files: dict[str, Path] = {}
    for folder in reversed(folders):
        if folder.is_dir():
            root = folder.resolve()
            for path in sorted(folder.rglob("*")):
                if not path.is_file():
                    continue
                target = path.resolve()
                if not target.is_relative_to(root):
                    print(f"left out of the archive: {path} links outside {folder}", file=sys.stderr)
                    continue
                files[path.relative_to(folder).as_posix()] = target
    return files


def _write_tar(files: dict[str, Path], destination: Path) -> Path:
    """The archive appears under its name only when complete (a full disk leaves no truncated model.tar.gz)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        with complete_file(destination) as partial, tarfile.open(partial, "w:gz", compresslevel=6) as archive:
            for name in sorted(files):
                archive.add(files[name], arcname=name, recursive=False)
    except OSError as error:  # a write to the open archive names no file, or its temporary one: name the archive
        if error.filename is None or str(error.filename).endswith(".partial"):
            raise OSError(error.errno, error.strerror, str(destination)) from error
        raise
    return destination


def pack(layouts: dict[str, HostLayout], staging: Path) -> dict[str, Path]:
    """Write model.tar.gz and output.tar.gz into `staging`."""
    hosts = list(layouts)
    model_files = _merged_files([layouts[h].model_dir for h in hosts])
    if len(hosts) == 1:
        output_files = _merged_files([layouts[hosts[0]].output_data_dir])
    else:  # one folder per host: several hosts' outputs must not overwrite each other
        output_files = {}
        for host in hosts:
            output_files.update({f"{host}/{name}": path for name, path in _merged_files([layouts[host].output_data_dir]).items()})
    return {
        "model.tar.gz": _write_tar(model_files, staging / "model.tar.gz"),
        "output.tar.gz": _write_tar(output_files, staging / "output.tar.gz"),
    }


def publish(layouts: dict[str, HostLayout], prefix: str, staging: Path, region: str | None) -> dict[str, str | None]:
    """Pack and place the artifacts under `prefix`; return {"model": uri, "output": uri, "profiler": uri|None}."""
    remote = prefix.startswith("s3://")
    packed = pack(layouts, staging if remote else Path(prefix, "output"))
    placed: dict[str, str | None] = {}
    for name, path in packed.items():
        placed[name.split(".")[0]] = aws_s3.upload_file(path, join(prefix, "output", name), region) if remote else str(path)
    if remote:
        shutil.rmtree(staging, ignore_errors=True)
    # the profiler's files already sit in <host>/ folders (profiler/schema.py): merge the hosts' trees
    profiled = [l.profiler_dir for l in layouts.values() if l.profiler_dir.is_dir() and any(l.profiler_dir.rglob("*"))]
    placed["profiler"] = join(prefix, "profiler") if profiled else None
    for folder in profiled:
        if remote:
            s3.upload_tree(folder, join(prefix, "profiler"), region)
        else:
            shutil.copytree(folder, join(prefix, "profiler"), dirs_exist_ok=True)
    return placed
