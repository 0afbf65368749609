"""The S3 operations only a local job needs (channel downloads, tree uploads); URIs, clients and single-file
uploads are launcher.aws's."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from launcher.aws.clients import client as aws_client
from jobspec.s3uri import parse_s3_uri


def client(region: str | None = None) -> Any:
    """The shared retrying S3 client (standard retry mode, AWS_ENDPOINT_URL honoured)."""
    return aws_client("s3", region)


def list_keys(uri: str, region: str | None = None) -> list[str]:
    """Every object key under the prefix, sorted (folder markers left out)."""
    bucket, prefix = parse_s3_uri(uri)
    s3 = client(region)
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
        keys.extend(obj["Key"] for obj in page.get("Contents", []) if not obj["Key"].endswith("/"))
    return sorted(keys)


def relative_name(prefix: str, key: str) -> str:
    """Where an object lands in a channel folder, as SageMaker's S3Prefix download places it."""
    if key == prefix:
        return key.rsplit("/", 1)[-1]
    if prefix == "" or prefix.endswith("/") or key[len(prefix)] == "/":
        return key[len(prefix):].lstrip("/")
    parent = prefix.rsplit("/", 1)[0] + "/" if "/" in prefix else ""
    return key[len(parent):]


def download(uri: str, keys: list[str], destination: Path, region: str | None = None) -> list[Path]:
    """Download `keys` (all under `uri`'s prefix) into `destination`, keeping their relative paths."""
    bucket, prefix = parse_s3_uri(uri)
    s3 = client(region)
    targets = []
    for key in keys:
        target = destination / relative_name(prefix, key)
        target.parent.mkdir(parents=True, exist_ok=True)
        targets.append((key, target))
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
