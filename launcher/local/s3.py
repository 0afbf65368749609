"""The S3 operations only a local job needs (channel downloads, tree uploads); URIs, clients and single-file
uploads are launcher.aws's."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from sagelaunch.launcher.aws.clients import client as aws_client
from sagelaunch.jobspec.s3uri import check_key_name, key_destination, parse_s3_uri


def client(region: str | None = None) -> Any:
    """The shared retrying S3 client (standard retry mode, AWS_ENDPOINT_URL honoured)."""
    return aws_client("s3", region)


def list_keys(uri: str, region: str | None = None) -> list[str]:
    """Every object key under the prefix, sorted (folder markers left out).

    A key that could not be downloaded into a folder (`../`, absolute, empty parts) is refused here, when
    the job is checked, before its folder exists (the download refuses it again, by the same rule)."""
    bucket, prefix = parse_s3_uri(uri)
    s3 = client(region)
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(obj["Key"] for obj in page.get("Contents", []) if not obj["Key"].endswith("/"))
    for key in keys:
        check_key_name(key, relative_name(prefix, key))
    return sorted(keys)


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


def download(uri: str, keys: list[str], destination: Path, region: str | None = None) -> list[Path]:
    """Download `keys` (all under `uri`'s prefix) into `destination`, keeping their relative paths."""
    bucket, prefix = parse_s3_uri(uri)
    s3 = client(region)
    targets = []
    for key in keys:  # every target is checked before anything is downloaded
        targets.append((key, key_destination(destination, key, relative_name(prefix, key))))
    for _, target in targets:
        target.parent.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda kt: s3.download_file(bucket, kt[0], str(kt[1])), targets))
    return [t for _, t in targets]


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
