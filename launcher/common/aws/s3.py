"""S3 helpers: the default SageMaker bucket (created when missing), multipart uploads, existence checks.

URI parsing and the bucket's name are jobspec.s3uri's."""

from __future__ import annotations

import os
from pathlib import Path

from sagelaunch.jobspec.s3uri import default_bucket_name, parse_s3_uri
from sagelaunch.launcher.common.aws.clients import account_id, client, resolve_region
from sagelaunch.launcher.common.aws.errors import AWSError, error_code, translate

MULTIPART_THRESHOLD = 8 * 1024 * 1024  # archives above this go up in parallel parts
MULTIPART_CHUNKSIZE = 8 * 1024 * 1024


_KNOWN_BUCKETS: set[tuple[str, str, str | None]] = set()  # checked or created in this process


def ensure_bucket(bucket: str, region: str | None = None) -> str:
    """Create `bucket` in `region` when missing, with every kind of public access blocked."""
    region = resolve_region(region)
    known = (bucket, region, os.environ.get("AWS_ENDPOINT_URL"))
    if known in _KNOWN_BUCKETS:
        return bucket
    s3 = client("s3", region)
    try:
        s3.head_bucket(Bucket=bucket)
        _KNOWN_BUCKETS.add(known)
        return bucket
    except Exception as exc:  # 404 → create it; anything else is explained below
        code = error_code(exc)
        if code not in ("404", "NoSuchBucket", "NotFound"):
            if code in ("403", "AccessDenied"):
                raise AWSError(
                    f"use bucket s3://{bucket}", "the bucket exists but belongs to another account or denies you",
                    "pass another bucket (bucket='my-bucket') or grant s3:ListBucket on it.", code,
                ) from None
            with translate(f"check bucket s3://{bucket}"):
                raise
    with translate(f"create bucket s3://{bucket} in {region}"):
        kwargs = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        try:
            s3.create_bucket(Bucket=bucket, **kwargs)
        except Exception as exc:
            if error_code(exc) != "BucketAlreadyOwnedByYou":  # a concurrent creator won the race
                raise
        s3.put_public_access_block(
            Bucket=bucket,
            PublicAccessBlockConfiguration={
                "BlockPublicAcls": True, "IgnorePublicAcls": True,
                "BlockPublicPolicy": True, "RestrictPublicBuckets": True,
            },
        )
    _KNOWN_BUCKETS.add(known)
    return bucket


def default_bucket(region: str | None = None) -> str:
    """`sagemaker-<region>-<account>`, created when missing, as the SageMaker SDK does."""
    region = resolve_region(region)
    return ensure_bucket(default_bucket_name(region, account_id(region)), region)


def transfer_config(threshold: int = MULTIPART_THRESHOLD, chunksize: int = MULTIPART_CHUNKSIZE):
    from boto3.s3.transfer import TransferConfig

    return TransferConfig(multipart_threshold=threshold, multipart_chunksize=chunksize, max_concurrency=4)


def upload_file(local: str | os.PathLike, s3_uri: str, region: str | None = None, *,
                multipart_threshold: int = MULTIPART_THRESHOLD, multipart_chunksize: int = MULTIPART_CHUNKSIZE,
                progress=None, extra_args: dict | None = None) -> str:
    """Upload one file (multipart above the threshold); return its s3:// URI.

    `progress(bytes_sent)` is called as parts go up (boto3's Callback); `extra_args`: PutObject fields
    such as ServerSideEncryption (boto3's ExtraArgs).
    """
    bucket, key = parse_s3_uri(s3_uri)
    if not key or key.endswith("/"):
        key += Path(local).name
    with translate(f"upload {local} to s3://{bucket}/{key}"):
        client("s3", region).upload_file(
            str(local), bucket, key,
            Config=transfer_config(multipart_threshold, multipart_chunksize), Callback=progress,
            ExtraArgs=extra_args or None,
        )
    return f"s3://{bucket}/{key}"


def delete_object(s3_uri: str, region: str | None = None) -> bool:
    """Delete one object; False (not an error) when that is impossible."""
    bucket, key = parse_s3_uri(s3_uri)
    try:
        client("s3", region).delete_object(Bucket=bucket, Key=key)
        return True
    except Exception:
        return False


def prefix_exists(s3_uri: str, region: str | None = None) -> bool:
    """True when at least one object lives at or under the URI."""
    bucket, key = parse_s3_uri(s3_uri)
    s3 = client("s3", region)
    try:
        answer = s3.list_objects_v2(Bucket=bucket, Prefix=key, MaxKeys=1)
    except Exception as exc:
        if error_code(exc) in ("NoSuchBucket", "404"):
            return False
        with translate(f"check input {s3_uri}"):
            raise
    return answer.get("KeyCount", 0) > 0
