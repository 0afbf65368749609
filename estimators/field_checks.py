"""Single-field checks of estimator arguments (pure functions; each error names its field)."""

from __future__ import annotations

import re
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError, shown
from sagelaunch.jobspec.fields import (  # noqa: F401 - the shared checks of names, keys and paths, used here by name
    RESERVED_HYPERPARAMETERS, channel_name, environment, hyperparameters, local_path,
)
from sagelaunch.jobspec.names import NAME_PATTERN
from sagelaunch.jobspec.s3uri import S3_URI
from sagelaunch.jobspec.s3uri import check_s3_uri as s3_uri  # noqa: F401 - the one S3-URI check, as check.s3_uri(...)
from sagelaunch.jobspec.suggest import choice_error

ROLE_ARN = re.compile(r"^arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+$")
IMAGE_URI = re.compile(r"^[a-z0-9][a-z0-9.\-]*(:\d+)?(/[a-z0-9._\-]+)+(:[A-Za-z0-9_.\-]{1,128}|@sha256:[0-9a-f]{64})?$")
KMS_KEY = re.compile(r"^[a-zA-Z0-9:/_\-]{1,2048}$")
SUBNET = re.compile(r"^subnet-[0-9a-z]{1,32}$")
SECURITY_GROUP = re.compile(r"^sg-[0-9a-z]{1,32}$")
REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")
PY_VERSION = re.compile(r"^py3\d{0,2}$")
VERSION = re.compile(r"^\d+(\.\d+){0,2}$")


ROLE_NAME = re.compile(r"^[\w+=,.@\-]{1,64}$")


def role(v: str | None) -> str | None:
    """An IAM role ARN, or a bare role name (expanded with the caller's account at submit, as the SDK does)."""
    if v is None or ROLE_ARN.match(v) or (ROLE_NAME.match(v) and not v.startswith("arn")):
        return v
    name = re.sub(r"[^\w+=,.@\-]+", "", v.rsplit("/", 1)[-1]) or "SageMakerRole"
    allowed, fix = "arn:aws:iam::<12 digits>:role/<name> or a role name", f"did you mean 'arn:aws:iam::<account-id>:role/{name}'?"
    raise SagelaunchError(f"role={v!r} is not an IAM role; allowed: {allowed}; {fix}", field="role", value=v,
                          allowed=allowed, fix=fix)


def image_uri(v: str | None) -> str | None:
    if v is None:
        return v
    if len(v) > 255 or not IMAGE_URI.match(v):
        example = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0-gpu-py310-cu118-ubuntu20.04-sagemaker"
        raise SagelaunchError(
            f"image_uri={v!r} is not a container image URI; allowed: <registry>/<repository>[:tag], e.g. {example}",
            field="image_uri", value=v, allowed="<registry>/<repository>[:tag]", fix=f"e.g. {example}")
    return v


def py_version(v: str | None) -> str | None:
    if v is not None and not PY_VERSION.match(v):
        raise SagelaunchError(f"py_version={v!r} is not valid; allowed: py3, py38, py39, py310, py311, py312 (or omit it)",
                              field="py_version", value=v, allowed="py3, py38, py39, py310, py311, py312", fix="or omit it")
    return v


def version_text(v: str | None) -> str | None:
    if v is not None and not VERSION.match(v):
        raise SagelaunchError(f"framework_version={v!r} is not a version; allowed: e.g. '2.0.0' or '2.0'",
                              field="framework_version", value=v, allowed="a version such as '2.0.0' or '2.0'",
                              fix="write it as text, e.g. '2.0.0'")
    return v


def region(v: str | None) -> str | None:
    if v is not None and not REGION.match(v):
        raise SagelaunchError(f"region={v!r} is not an AWS region name; allowed: e.g. us-west-2, eu-central-1",
                              field="region", value=v, allowed="an AWS region name, e.g. us-west-2, eu-central-1",
                              fix="use a region name such as us-west-2")
    return v


def number_as_version(field: str, v: float | int, framework: str) -> str:
    """A version written as a YAML/JSON number (2.0, 2.10 → 2.1): say so and how to quote it."""
    text = str(v)
    example = text if text.count(".") == 2 else f"{text}.0" if text.count(".") == 1 else f"{text}.0.0"
    if field == "py_version":
        return (f"py_version={v!r} is a number, not a Python tag; quote it and use the tag form, "
                f"e.g. py_version: 'py{text.replace('.', '')}'")
    return (f"framework_version={v!r} is a number, not a version string (YAML reads an unquoted 2.10 as 2.1); "
            f"quote it: framework_version: '{example}'")


def source_dir(v: str | None) -> str | None:
    if v is None:
        return v
    if not v:
        raise SagelaunchError("source_dir='' is empty; give a folder, an s3://…/sourcedir.tar.gz, or omit it",
                              field="source_dir", value=v, allowed="a folder or an s3://…/sourcedir.tar.gz", fix="or omit it")
    local_path("source_dir", v)
    if v.startswith("s3://") and (not S3_URI.match(v) or not v.endswith(".tar.gz")):
        raise SagelaunchError(f"source_dir={v!r}: an S3 source_dir must be a .tar.gz, e.g. s3://bucket/code/sourcedir.tar.gz",
                              field="source_dir", value=v, allowed="s3://<bucket>/<key>.tar.gz",
                              fix="e.g. s3://bucket/code/sourcedir.tar.gz")
    return v


def entry_point(v: str) -> str:
    if not v or v.startswith("s3://") or v.endswith("/"):
        raise SagelaunchError(f"entry_point={v!r} must be a script path such as 'train.py' (relative to source_dir)",
                              field="entry_point", value=v, allowed="a script path relative to source_dir",
                              fix="e.g. 'train.py'")
    return local_path("entry_point", v)


def kms_key(field: str, v: str | None) -> str | None:
    if v is not None and not KMS_KEY.match(v):
        raise SagelaunchError(f"{field}={v!r} is not a KMS key id/ARN; allowed: letters, digits, : / _ - (≤ 2048)",
                              field=field, value=v, allowed="letters, digits, : / _ - (≤ 2048)", fix="give the key's id or ARN")
    return v


def id_list(field: str, v: list[str] | None, pattern: re.Pattern[str], max_len: int, example: str) -> list[str] | None:
    if v is None:
        return v
    if not v or len(v) > max_len:
        raise SagelaunchError(f"{field} has {len(v)} entries; allowed: 1..{max_len}", field=field, value=v,
                              allowed=f"1..{max_len} entries", fix=f"give 1 to {max_len}, or omit it")
    for item in v:
        if not pattern.match(item):
            raise SagelaunchError(f"{field} entry {item!r} is not valid; allowed: e.g. {example!r}", field=field,
                                  value=item, allowed=f"ids such as {example!r}", fix=f"e.g. {example!r}")
    return v


def tags(v: Any) -> list[dict[str, str]] | None:
    if v is None:
        return None
    items = [{"Key": k, "Value": val} for k, val in v.items()] if isinstance(v, dict) else v
    if not isinstance(items, list):
        raise SagelaunchError(f"tags={shown(v)} must be a list of {{'Key': …, 'Value': …}} or a dict", field="tags",
                              value=v, allowed="a list of {'Key': …, 'Value': …} or a dict", fix="e.g. {'team': 'ml'}")
    out = []
    for t in items:
        if not isinstance(t, dict) or set(t) != {"Key", "Value"} or not all(isinstance(x, str) for x in t.values()):
            raise SagelaunchError(f"tags entry {shown(t)} must be {{'Key': str, 'Value': str}}", field="tags", value=t,
                                  allowed="{'Key': str, 'Value': str}", fix="e.g. {'Key': 'team', 'Value': 'ml'}")
        if not 1 <= len(t["Key"]) <= 128 or len(t["Value"]) > 256 or t["Key"].lower().startswith("aws:"):
            raise SagelaunchError(f"tags entry {shown(t)}: Key 1-128 characters not starting with 'aws:', Value ≤ 256",
                                  field="tags", value=t, allowed="Key 1-128 characters not starting with 'aws:', Value ≤ 256",
                                  fix="shorten or rename the tag")
        out.append(dict(t))
    if len(out) > 50:
        raise SagelaunchError(f"tags has {len(out)} entries; allowed: at most 50", field="tags", value=len(out),
                              allowed="at most 50 entries", fix="drop some tags")
    return out


def base_job_name(v: str | None) -> str | None:
    if v is not None and not NAME_PATTERN.match(v):
        cleaned = re.sub(r"[^a-zA-Z0-9-]+", "-", v or "").strip("-") or "my-job"
        raise SagelaunchError(
            f"base_job_name={v!r} is not valid; allowed: letters, digits and hyphens (≤ 63); "
            f"did you mean {cleaned[:39]!r}?", field="base_job_name", value=v,
            allowed="letters, digits and hyphens (≤ 63)", fix=f"did you mean {cleaned[:39]!r}?")
    return v


def choice(field: str, v: str, allowed: tuple[str, ...]) -> str:
    if v not in allowed:
        raise choice_error(field, v, allowed)
    return v


METRIC_NAME_MAX, METRIC_REGEX_MAX, MAX_METRICS = 255, 500, 40  # SageMaker's MetricDefinition limits


def metric_definitions(v: list[dict[str, str]] | None) -> list[dict[str, str]] | None:
    if v is None:
        return v
    if not 0 < len(v) <= MAX_METRICS:
        raise SagelaunchError(f"metric_definitions has {len(v)} entries; allowed: 1..{MAX_METRICS} (or omit it)",
                              field="metric_definitions", value=v, allowed=f"1..{MAX_METRICS} entries", fix="or omit it")
    for m in v:
        if not isinstance(m, dict) or set(m) != {"Name", "Regex"} or not all(isinstance(x, str) for x in m.values()):
            example = "{'Name': 'train:loss', 'Regex': 'loss=([0-9.]+)'}"
            raise SagelaunchError(f"metric_definitions entry {shown(m)} must be {{'Name': str, 'Regex': str}}, e.g. "
                                  f"{example}", field="metric_definitions", value=m,
                                  allowed="{'Name': str, 'Regex': str}", fix=f"e.g. {example}")
        if not 0 < len(m["Name"]) <= METRIC_NAME_MAX or not 0 < len(m["Regex"]) <= METRIC_REGEX_MAX:
            allowed = f"Name 1-{METRIC_NAME_MAX} characters, Regex 1-{METRIC_REGEX_MAX}"
            raise SagelaunchError(f"metric_definitions entry {shown(m)}: {allowed}", field="metric_definitions",
                                  value=m, allowed=allowed, fix="shorten the Name or Regex")
        try:
            re.compile(m["Regex"])
        except re.error as err:
            raise SagelaunchError(f"metric_definitions entry {m['Name']!r}: Regex {m['Regex']!r} is not a regular "
                                  f"expression ({err}); allowed: a regex whose first group captures the value",
                                  field="metric_definitions", value=m["Regex"],
                                  allowed="a regex whose first group captures the value", fix=f"fix the regex ({err})") from None
    return v


def string_list(field: str, v: list[str] | None, max_items: int = 100, max_chars: int = 256) -> list[str] | None:
    """ContainerEntrypoint / ContainerArguments: SageMaker's limits are 100 strings of 1-256 characters."""
    if v is None:
        return v
    if not 0 < len(v) <= max_items:
        raise SagelaunchError(f"{field} has {len(v)} entries; allowed: 1..{max_items}, e.g. ['python', 'train.py']",
                              field=field, value=v, allowed=f"1..{max_items} entries", fix="e.g. ['python', 'train.py']")
    for item in v:
        if not isinstance(item, str) or not 0 < len(item) <= max_chars or "\x00" in item:
            raise SagelaunchError(f"{field} entry {shown(item)} is not valid; allowed: text of 1-{max_chars} characters",
                                  field=field, value=item, allowed=f"text of 1-{max_chars} characters",
                                  fix="give non-empty text without NUL characters")
    return v


def dependencies(v: list[str] | None) -> list[str] | None:
    if v is None:
        return v
    for item in v:
        if not isinstance(item, str) or not item or item.startswith("s3://"):
            raise SagelaunchError(f"dependencies entry {shown(item)} is not valid; allowed: local files or folders, "
                                  "shipped at the code's root under their own names, e.g. ['lib/my_utils']",
                                  field="dependencies", value=item, allowed="local files or folders",
                                  fix="e.g. ['lib/my_utils']")
        local_path("dependencies entry", item)
    return v


def model_uri(v: str | None) -> str | None:
    """An s3:// URI (a SageMaker job's model channel) or a local file/folder (local jobs)."""
    if v is None:
        return v
    if v.lower().startswith("s3:") or v.startswith("s3/"):
        return s3_uri("model_uri", v)
    if not v:
        raise SagelaunchError(f"model_uri={shown(v)} must be s3://<bucket>/<key> (e.g. …/model.tar.gz) or, for local "
                              "jobs, a local file or folder", field="model_uri", value=v,
                              allowed="s3://<bucket>/<key>, or a local file or folder for local jobs",
                              fix="e.g. s3://bucket/model/model.tar.gz")
    return local_path("model_uri", v)
