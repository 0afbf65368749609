"""Input channels of a local job: checked before anything starts, then laid into each host's input/data.

Local folders and files (file:// or a plain path) reach the job as a clone, a copy or a read-only view, never as a
link to the user's files (launcher.local.channel_views). s3:// prefixes are downloaded once per job with boto3 (so a
moto server works too) and linked into every host; with ShardedByS3Key each host gets its own share of the objects,
as on SageMaker.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.spec import InputChannel
from sagelaunch.launcher.local import channel_views, s3
from sagelaunch.launcher.local.preflight import check_no_loop


@dataclass(frozen=True)
class ResolvedChannel:
    channel: InputChannel
    local_path: Path | None = None  # a local file or folder
    s3_keys: tuple[str, ...] = ()  # objects under an s3:// prefix


def local_path(uri: str) -> Path:
    if uri.startswith("file://"):
        return Path(unquote(urlparse(uri).path))
    return Path(uri).expanduser()


def resolve(channel: InputChannel, region: str) -> ResolvedChannel:
    """Check one channel can be read; raise ValueError naming it and what to fix."""
    where = f"inputs[{channel.name!r}]"
    if channel.input_mode == "Pipe":
        raise SagelaunchError(f"{where}: input_mode 'Pipe' is not available in local jobs; use 'File' or 'FastFile' "
                              "(the script reads the same files)", field=f"{where}.input_mode", value="Pipe",
                              allowed="File, FastFile", fix="use 'File' or 'FastFile' (the script reads the same files)")
    if channel.uri.startswith("s3://"):
        if channel.s3_data_type != "S3Prefix":
            raise SagelaunchError(f"{where}: s3_data_type {channel.s3_data_type!r} is not available in local jobs; "
                                  "use 'S3Prefix'", field=f"{where}.s3_data_type", value=channel.s3_data_type,
                                  allowed="S3Prefix", fix="use 'S3Prefix'")
        try:
            keys = s3.list_keys(channel.uri, region)
        except Exception as error:  # botocore's errors: NoSuchBucket, AccessDenied, no credentials…
            raise SagelaunchError(f"{where}: cannot list {channel.uri}: {error}", field=where, value=channel.uri,
                                  allowed="an S3 prefix you can list", fix="check the bucket and your credentials") from error
        if not keys:
            raise SagelaunchError(f"{where}: no objects under {channel.uri}; check the bucket and prefix", field=where,
                                  value=channel.uri, allowed="an S3 prefix with objects",
                                  fix="check the bucket and prefix")
        return ResolvedChannel(channel, s3_keys=tuple(keys))
    return resolve_local(channel)


def resolve_local(channel: InputChannel) -> ResolvedChannel:
    """A local channel (file:// or a plain path) that exists and can be read; no network (`validate` uses it)."""
    where = f"inputs[{channel.name!r}]"
    if "://" in channel.uri and not channel.uri.startswith("file://"):
        raise SagelaunchError(f"{where}: {channel.uri!r} — a local job reads s3://, file:// or a plain local path",
                              field=where, value=channel.uri, allowed="s3://, file:// or a plain local path",
                              fix="use one of those forms")
    check_no_loop(local_path(channel.uri), where)
    path = local_path(channel.uri).resolve()
    if not path.exists():
        raise SagelaunchError(f"{where}: {channel.uri!r} does not exist; pass an existing folder or file", field=where,
                              value=channel.uri, allowed="an existing folder or file",
                              fix="pass an existing folder or file")
    _try_reading(path, where, channel.uri)
    return ResolvedChannel(channel, local_path=path)


def _try_reading(path: Path, where: str, uri: str) -> None:
    """List the folder / open the file for real: os.access says yes to root for everything."""
    try:
        if path.is_dir():
            with os.scandir(path) as entries:
                next(entries, None)
        elif path.is_file():
            with open(path, "rb") as handle:
                handle.read(1)
        else:
            raise SagelaunchError(f"{where}: {uri!r} is neither a folder nor a regular file (a socket, FIFO or "
                                  "device); pass a folder or a file", field=where, value=uri,
                                  allowed="a folder or a regular file", fix="pass a folder or a file")
    except OSError as error:
        raise SagelaunchError(f"{where}: {uri!r} cannot be read ({error.strerror or error}); "
                              "fix its permissions or pass another folder", field=where, value=uri,
                              allowed="a readable folder or file", fix="fix its permissions or pass another folder") from None


def check_s3_prefix(uri: str, region: str, field: str) -> None:
    """The bucket exists and can be listed (the prefix may be empty)."""
    try:
        s3.list_keys(uri, region)
    except Exception as error:
        raise SagelaunchError(f"{field}: cannot list {uri}: {error}; check the bucket and your credentials",
                              field=field, value=uri, allowed="an S3 prefix you can list",
                              fix="check the bucket and your credentials") from error


def _link_or_copy(source: Path, link: Path) -> None:
    try:
        link.symlink_to(source, target_is_directory=source.is_dir())
    except OSError:  # a filesystem without symlinks: copy instead
        if source.is_dir():
            shutil.copytree(source, link)
        else:
            shutil.copy2(source, link)


def materialize(resolved: ResolvedChannel, job_dir: Path, host_channel_dirs: list[Path], region: str, *,
                fast_file: bool = False) -> list[tuple[Path, Path]]:
    """Fill each host's input/data/<channel> (one entry per host, in host order). Returns the read-only binds
    (source, target) the supervisor mounts for a local channel shown without a copy."""
    channel = resolved.channel
    if resolved.local_path is not None:
        return _local_views(resolved.local_path, host_channel_dirs, fast_file=fast_file)
    cache = job_dir / "channels" / channel.name
    hosts = len(host_channel_dirs)
    if channel.distribution == "ShardedByS3Key" and hosts > 1:
        for index, channel_dir in enumerate(host_channel_dirs):
            share = cache / f"shard-{index + 1}"
            share.mkdir(parents=True, exist_ok=True)
            s3.download(channel.uri, list(resolved.s3_keys[index::hosts]), share, region)
            _link_or_copy(share, channel_dir)
        return []
    cache.mkdir(parents=True, exist_ok=True)
    s3.download(channel.uri, list(resolved.s3_keys), cache, region)
    for channel_dir in host_channel_dirs:
        _link_or_copy(cache, channel_dir)
    return []


def _local_views(source: Path, host_channel_dirs: list[Path], *, fast_file: bool) -> list[tuple[Path, Path]]:
    """Each host's view of a local folder or file: it can never change the source (channel_views)."""
    binds: list[tuple[Path, Path]] = []
    strategy: channel_views.Strategy | None = None
    for channel_dir in host_channel_dirs:
        # a single file: the channel folder holds it
        target = channel_dir if source.is_dir() else channel_dir / source.name
        target.parent.mkdir(parents=True, exist_ok=True)
        strategy = strategy or channel_views.choose(source, target.parent, fast_file=fast_file)
        if strategy == "read-only":
            target.mkdir() if source.is_dir() else target.touch()
            binds.append((source, target))
        else:
            channel_views.copy_view(source, target, clone=strategy == "clone")
    return binds
