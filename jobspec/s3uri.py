"""S3 URIs and the SageMaker SDK's default bucket name: pure text rules, no network."""

from __future__ import annotations

import re

# what the estimators accept as an S3 URI (bucket naming rules, then any key)
S3_URI = re.compile(r"^s3://[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9](/.*)?$")


def is_s3_uri(uri: str) -> bool:
    return uri.startswith("s3://")


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """'s3://bucket/key/prefix' → ('bucket', 'key/prefix')."""
    if not uri.startswith("s3://") or len(uri) <= 5:
        raise ValueError(f"{uri!r} is not an S3 URI; expected s3://bucket/key, e.g. s3://my-bucket/data/train.")
    bucket, _, key = uri[5:].partition("/")
    if not bucket:
        raise ValueError(f"{uri!r} has no bucket name; expected s3://bucket/key.")
    return bucket, key


def default_bucket_name(region: str, account: str) -> str:
    """`sagemaker-<region>-<account>`, the bucket the SageMaker SDK uses when none is given."""
    return f"sagemaker-{region}-{account}"
