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

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.s3uri import parse_s3_uri
from sagelaunch.launcher.local.host_layout import HostLayout
from sagelaunch.launcher.common.aws import s3 as aws_s3
from sagelaunch.launcher.local import s3
from sagelaunch.launcher.common.safe_write import complete_file


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


ARCHIVES = ("model.tar.gz", "output.tar.gz")


def _taken(prefix: str, job_name: str) -> SagelaunchError:
    fix = "choose another job_name, or another output_path"
    return SagelaunchError(f"job_name {job_name!r}: {join(prefix, 'output')} already holds another job's outputs "
                           "(a job of this name in another registry, or a SageMaker job writing to the same S3 prefix); "
                           f"a job never replaces another's model.tar.gz — {fix}", field="job_name", value=job_name,
                           allowed=f"a name with no outputs under {prefix}", fix=fix)


def check_outputs_free(prefix: str, job_name: str, region: str | None) -> None:
    """As on SageMaker, where a job name is unique per account and region: refuse a job whose model.tar.gz or
    output.tar.gz would replace one already at its place. Checked before the job starts and again as it writes."""
    if prefix.startswith("s3://"):
        bucket, key = parse_s3_uri(join(prefix, "output") + "/")
        try:
            found = s3.client(region).list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=100).get("Contents", [])
        except Exception as error:  # botocore's errors: NoSuchBucket, AccessDenied, no credentials…
            fix = "check the bucket and your credentials"
            raise SagelaunchError(f"output_path: cannot list s3://{bucket}/{key} ({error}); {fix}", field="output_path",
                                  value=prefix, allowed="an S3 prefix you can list", fix=fix) from error
        if any(obj["Key"].rsplit("/", 1)[-1] in ARCHIVES for obj in found):
            raise _taken(prefix, job_name)
    elif any(Path(prefix, "output", name).exists() for name in ARCHIVES):
        raise _taken(prefix, job_name)


def _write_tar(files: dict[str, Path], destination: Path, *, replace: bool = True) -> Path:
    """The archive appears under its name only when complete (a full disk leaves no truncated model.tar.gz); with
    replace=False it never takes the place of a file already there (FileExistsError)."""
    destination.parent.mkdir(parents=True, exist_ok=True)
    try:
        with (complete_file(destination, replace=replace) as partial,
              tarfile.open(partial, "w:gz", compresslevel=6) as archive):
            for name in sorted(files):
                archive.add(files[name], arcname=name, recursive=False)
    except FileExistsError:
        raise
    except OSError as error:  # a write to the open archive names no file, or its temporary one: name the archive
        if error.filename is None or str(error.filename).endswith(".partial"):
            raise OSError(error.errno, error.strerror, str(destination)) from error
        raise
    return destination


def pack(layouts: dict[str, HostLayout], staging: Path, *, replace: bool = True) -> dict[str, Path]:
    """Write model.tar.gz and output.tar.gz into `staging` (with replace=False: never over a file there)."""
    hosts = list(layouts)
    model_files = _merged_files([layouts[h].model_dir for h in hosts])
    if len(hosts) == 1:
        output_files = _merged_files([layouts[hosts[0]].output_data_dir])
    else:  # one folder per host: several hosts' outputs must not overwrite each other
        output_files = {}
        for host in hosts:
            output_files.update({f"{host}/{name}": path for name, path in _merged_files([layouts[host].output_data_dir]).items()})
    return {
        "model.tar.gz": _write_tar(model_files, staging / "model.tar.gz", replace=replace),
        "output.tar.gz": _write_tar(output_files, staging / "output.tar.gz", replace=replace),
    }


def publish(layouts: dict[str, HostLayout], prefix: str, staging: Path, region: str | None,
            job_name: str) -> dict[str, str | None]:
    """Pack and place the artifacts under `prefix`; return {"model": uri, "output": uri, "profiler": uri|None}.
    Never over another job's archives (check_outputs_free; locally the archive's own write refuses a taken name)."""
    remote = prefix.startswith("s3://")
    check_outputs_free(prefix, job_name, region)
    try:
        packed = pack(layouts, staging if remote else Path(prefix, "output"), replace=remote)
    except FileExistsError:  # another job wrote its archive there while this one ran
        raise _taken(prefix, job_name) from None
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
