"""S3 URIs, the SageMaker SDK's default bucket name and where an object lands on disk: no network."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import overload

from sagelaunch.jobspec.errors import SagelaunchError

# what the estimators accept as an S3 URI (bucket naming rules, then any key)
S3_URI = re.compile(r"^s3://[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9](/.*)?$")


@overload
def check_s3_uri(field: str, v: str) -> str: ...
@overload
def check_s3_uri(field: str, v: None) -> None: ...
def check_s3_uri(field: str, v: str | None) -> str | None:
    """`v` if it is an S3 URI (or None); otherwise an error naming the field, with the URI it probably meant."""
    if v is not None and not S3_URI.match(v):
        fixed = s3_uri_fix(v)
        hint = f"; did you mean {fixed!r}?" if fixed else ""
        raise SagelaunchError(f"{field}={v!r} is not an S3 URI; allowed: s3://<bucket>[/prefix]{hint}", field=field,
                              value=v, allowed="s3://<bucket>[/prefix]", fix=hint.removeprefix("; ") or "write s3://<bucket>/<prefix>")
    return v


def s3_uri_fix(v: str) -> str | None:
    """'s3:/b/k', 'S3://b/k', 's3//b/k', 's3:b/k' → 's3://b/k' when that is a valid URI."""
    m = re.match(r"^s3:?/*(?=[^/:])", v, re.IGNORECASE)
    if not m or not (v[:2].lower() == "s3"):
        return None
    fixed = "s3://" + v[m.end():]
    return fixed if fixed != v and S3_URI.match(fixed) else None


def is_s3_uri(uri: str) -> bool:
    return uri.startswith("s3://")


def parse_s3_uri(uri: str) -> tuple[str, str]:
    """'s3://bucket/key/prefix' → ('bucket', 'key/prefix')."""
    if not uri.startswith("s3://") or len(uri) <= 5:
        raise SagelaunchError(f"{uri!r} is not an S3 URI; expected s3://bucket/key, e.g. s3://my-bucket/data/train.",
                              field="uri", value=uri, allowed="s3://bucket/key", fix="e.g. s3://my-bucket/data/train")
    bucket, _, key = uri[5:].partition("/")
    if not bucket:
        raise SagelaunchError(f"{uri!r} has no bucket name; expected s3://bucket/key.", field="uri", value=uri,
                              allowed="s3://bucket/key", fix="name the bucket")
    return bucket, key


def default_bucket_name(region: str, account: str) -> str:
    """`sagemaker-<region>-<account>`, the bucket the SageMaker SDK uses when none is given."""
    return f"sagemaker-{region}-{account}"


def unsafe_key_reason(relative: str) -> str | None:
    """Why an object named `relative` below its prefix cannot be written under a folder (None: it can).

    S3 keys are any text; a folder path is not: an absolute name, `.`/`..` or empty parts would land
    outside the folder or on top of it, a backslash or NUL is a separator or an end on other systems."""
    if not relative:
        return "it names no file below the prefix"
    if relative.startswith("/"):
        return "it starts with '/'"
    if "\\" in relative or "\x00" in relative:
        return "it holds a backslash or NUL"
    parts = relative.split("/")
    if "" in parts:
        return "it has an empty part ('//' or a trailing '/')"
    if "." in parts or ".." in parts:
        return "it has a '.' or '..' part"
    return None


def check_key_name(key: str, relative: str) -> None:
    """Refuse, naming it, an object whose name below the prefix (`relative`) could leave a download folder."""
    why = unsafe_key_reason(relative)
    if why is not None:
        raise _key_refused(key, why)


def key_destination(destination: str | os.PathLike, key: str, relative: str) -> Path:
    """Where the object `key` (named `relative` below the downloaded prefix) is written under `destination`.

    The one mapping of every S3 download to disk: a key whose name could leave the folder, or that
    resolves outside it through a link already there, is refused with the key named."""
    check_key_name(key, relative)
    root = Path(os.path.realpath(destination))
    target = root.joinpath(*relative.split("/"))
    if not Path(os.path.realpath(target)).is_relative_to(root):
        raise _key_refused(key, f"it resolves outside {str(destination)!r} through a symlink there")
    return target


def _key_refused(key: str, why: str) -> SagelaunchError:
    fix = "rename the object (the keys below a prefix must be plain relative paths)"
    return SagelaunchError(f"S3 object {key!r} refused: {why}, so it would be written outside the download folder; "
                           f"{fix}", field="S3 key", value=key, allowed="a plain relative path below the prefix",
                           fix=fix)
