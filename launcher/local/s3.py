"""The S3 operations only a local job needs (channel downloads, tree uploads); URIs, clients and single-file
uploads are launcher.common.aws's."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sagelaunch.launcher.common.aws.clients import client as aws_client
from sagelaunch.jobspec.s3uri import check_key_name, key_destination, parse_s3_uri


def client(region: str | None = None) -> Any:
    """The shared retrying S3 client (standard retry mode, AWS_ENDPOINT_URL honoured)."""
    return aws_client("s3", region)


def list_keys(uri: str, region: str | None = None) -> list[str]:
    """Every object key under the prefix, sorted (folder markers left out).

    A key that could not be downloaded into a folder (`../`, absolute, empty parts) is refused here, when
    the job is checked, before its folder exists (the download refuses it again, by the same rule)."""
    return sorted(list_modified(uri, region))


def list_modified(uri: str, region: str | None = None) -> dict[str, float]:
    """Every object key under the prefix (folder markers left out) → its LastModified, in seconds since the epoch."""
    bucket, prefix = parse_s3_uri(uri)
    s3 = client(region)
    found = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        found.update({obj["Key"]: obj["LastModified"].timestamp() for obj in page.get("Contents", [])
                      if not obj["Key"].endswith("/")})
    for key in found:
        check_key_name(key, relative_name(prefix, key))
    return found


def relative_name(prefix: str, key: str) -> str:
    """Where an object lands in a channel folder, as SageMaker's S3Prefix download places it."""
    if key == prefix:
        return key.rsplit("/", 1)[-1]
    if prefix == "" or prefix.endswith("/"):
        return key[len(prefix):]  # kept as it is: a leading '/' left is an empty part, refused by the mapping
    if key[len(prefix)] == "/":
        return key[len(prefix) + 1:]
    parent = prefix.rsplit("/", 1)[0] + "/" if "/" in prefix else ""
    return key[len(parent):]


def _targets(uri: str, keys: list[str], destination: Path) -> list[tuple[str, Path]]:
    """Where each key lands; every target is checked before anything is downloaded."""
    prefix = parse_s3_uri(uri)[1]
    return [(key, key_destination(destination, key, relative_name(prefix, key))) for key in keys]


def download(uri: str, keys: list[str], destination: Path, region: str | None = None,
             modified: dict[str, float] | None = None) -> list[Path]:
    """Download `keys` (all under `uri`'s prefix) into `destination`, keeping their relative paths; with
    `modified` (key → LastModified), each file keeps its object's age as its modification time."""
    bucket = parse_s3_uri(uri)[0]
    s3 = client(region)
    targets = _targets(uri, keys, destination)
    for _, target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)

    def fetch(key_target: tuple[str, Path]) -> None:
        key, target = key_target
        s3.download_file(bucket, key, str(target))
        if modified is not None:
            os.utime(target, (modified[key], modified[key]))

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(fetch, targets))
    return [t for _, t in targets]


def restore_by_age(uri: str, destination: Path, region: str | None = None) -> list[Path]:
    """Bring `destination` up to date with `uri` without ever replacing a newer file with an older one: an object
    is downloaded unless the local file at its place was modified after it. Returns the local files kept."""
    modified = list_modified(uri, region)
    kept, fetch = [], []
    for key, target in _targets(uri, sorted(modified), destination):
        if target.is_file() and target.stat().st_mtime > modified[key]:
            kept.append(target)
        else:
            fetch.append(key)
    download(uri, fetch, destination, region, modified)
    return kept


def upload_tree(folder: Path, uri: str, region: str | None = None, newer_than: float | None = None) -> str:
    """Upload every file under `folder` (only those modified after `newer_than`, when given)."""
    bucket, prefix = parse_s3_uri(uri)
    s3 = client(region)
    files = [p for p in sorted(folder.rglob("*"))
             if p.is_file() and (newer_than is None or p.stat().st_mtime > newer_than)]

    def upload(path: Path) -> None:
        s3.upload_file(str(path), bucket, f"{prefix.rstrip('/')}/{path.relative_to(folder).as_posix()}")

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(upload, files))
    return uri
