"""Single-field checks of estimator arguments (pure functions; each error names its field)."""

from __future__ import annotations

import json
import re
from typing import Any

from jobspec.errors import cut, shown
from jobspec.names import NAME_PATTERN
from jobspec.s3uri import S3_URI
from jobspec.suggest import did_you_mean

ROLE_ARN = re.compile(r"^arn:aws[a-z\-]*:iam::\d{12}:role/?[a-zA-Z_0-9+=,.@\-_/]+$")
IMAGE_URI = re.compile(r"^[a-z0-9][a-z0-9.\-]*(:\d+)?(/[a-z0-9._\-]+)+(:[A-Za-z0-9_.\-]{1,128}|@sha256:[0-9a-f]{64})?$")
KMS_KEY = re.compile(r"^[a-zA-Z0-9:/_\-]{1,2048}$")
SUBNET = re.compile(r"^subnet-[0-9a-z]{1,32}$")
SECURITY_GROUP = re.compile(r"^sg-[0-9a-z]{1,32}$")
ENV_KEY = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]{0,511}$")
REGION = re.compile(r"^[a-z]{2}(-[a-z]+)+-\d$")
PY_VERSION = re.compile(r"^py3\d{0,2}$")
VERSION = re.compile(r"^\d+(\.\d+){0,2}$")
LOCAL_PATH = re.compile(r"^/[^\x00]{0,4095}$")
RESERVED_HYPERPARAMETERS = (
    "sagemaker_program", "sagemaker_submit_directory", "sagemaker_region", "sagemaker_job_name",
    "sagemaker_container_log_level",
)
MAX_HYPERPARAMETERS = 100  # SageMaker's limit on HyperParameters entries
MAX_HYPERPARAMETER_CHARS = 2500  # SageMaker's limit on one HyperParameters value
MAX_NESTING = 32  # lists/dicts inside a hyperparameter value: deeper is refused before anything recurses over it


ROLE_NAME = re.compile(r"^[\w+=,.@\-]{1,64}$")


def role(v: str | None) -> str | None:
    """An IAM role ARN, or a bare role name (expanded with the caller's account at submit, as the SDK does)."""
    if v is None or ROLE_ARN.match(v) or (ROLE_NAME.match(v) and not v.startswith("arn")):
        return v
    name = re.sub(r"[^\w+=,.@\-]+", "", v.rsplit("/", 1)[-1]) or "SageMakerRole"
    raise ValueError(
        f"role={v!r} is not an IAM role; allowed: arn:aws:iam::<12 digits>:role/<name> or a role name; "
        f"did you mean 'arn:aws:iam::<account-id>:role/{name}'?"
    )


def image_uri(v: str | None) -> str | None:
    if v is None:
        return v
    if len(v) > 255 or not IMAGE_URI.match(v):
        raise ValueError(
            f"image_uri={v!r} is not a container image URI; allowed: <registry>/<repository>[:tag], e.g. "
            "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0-gpu-py310-cu118-ubuntu20.04-sagemaker"
        )
    return v


def py_version(v: str | None) -> str | None:
    if v is not None and not PY_VERSION.match(v):
        raise ValueError(f"py_version={v!r} is not valid; allowed: py3, py38, py39, py310, py311, py312 (or omit it)")
    return v


def version_text(v: str | None) -> str | None:
    if v is not None and not VERSION.match(v):
        raise ValueError(f"framework_version={v!r} is not a version; allowed: e.g. '2.0.0' or '2.0'")
    return v


def region(v: str | None) -> str | None:
    if v is not None and not REGION.match(v):
        raise ValueError(f"region={v!r} is not an AWS region name; allowed: e.g. us-west-2, eu-central-1")
    return v


def s3_uri(field: str, v: str | None) -> str | None:
    if v is not None and not S3_URI.match(v):
        fixed = s3_uri_fix(v)
        hint = f"; did you mean {fixed!r}?" if fixed else ""
        raise ValueError(f"{field}={v!r} is not an S3 URI; allowed: s3://<bucket>[/prefix]{hint}")
    return v


def s3_uri_fix(v: str) -> str | None:
    """'s3:/b/k', 'S3://b/k', 's3//b/k', 's3:b/k' → 's3://b/k' when that is a valid URI."""
    m = re.match(r"^s3:?/*(?=[^/:])", v, re.IGNORECASE)
    if not m or not (v[:2].lower() == "s3"):
        return None
    fixed = "s3://" + v[m.end():]
    return fixed if fixed != v and S3_URI.match(fixed) else None


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
        raise ValueError("source_dir='' is empty; give a folder, an s3://…/sourcedir.tar.gz, or omit it")
    if v.startswith("s3://") and (not S3_URI.match(v) or not v.endswith(".tar.gz")):
        raise ValueError(f"source_dir={v!r}: an S3 source_dir must be a .tar.gz, e.g. s3://bucket/code/sourcedir.tar.gz")
    return v


def entry_point(v: str) -> str:
    if not v or v.startswith("s3://") or v.endswith("/"):
        raise ValueError(f"entry_point={v!r} must be a script path such as 'train.py' (relative to source_dir)")
    return v


def kms_key(field: str, v: str | None) -> str | None:
    if v is not None and not KMS_KEY.match(v):
        raise ValueError(f"{field}={v!r} is not a KMS key id/ARN; allowed: letters, digits, : / _ - (≤ 2048)")
    return v


def id_list(field: str, v: list[str] | None, pattern: re.Pattern[str], max_len: int, example: str) -> list[str] | None:
    if v is None:
        return v
    if not v or len(v) > max_len:
        raise ValueError(f"{field} has {len(v)} entries; allowed: 1..{max_len}")
    for item in v:
        if not pattern.match(item):
            raise ValueError(f"{field} entry {item!r} is not valid; allowed: e.g. {example!r}")
    return v


def environment(v: dict[str, str] | None) -> dict[str, str] | None:
    if v is None:
        return v
    if len(v) > 100:
        raise ValueError(f"environment has {len(v)} variables; allowed: at most 100")
    for key, value in v.items():
        if not ENV_KEY.match(key):
            raise ValueError(f"environment key {key!r} is not a variable name; allowed: [A-Za-z_][A-Za-z0-9_]*")
        if len(value) > 512:
            raise ValueError(f"environment[{key!r}] is {len(value)} characters; allowed: at most 512")
        if "\x00" in value:
            raise ValueError(f"environment[{key!r}]={cut(value)!r} contains a NUL character (\\x00), which no "
                             "process environment can hold; allowed: text without \\x00 — remove it")
    return v


def _check_encoded_size(key: str, value: Any) -> None:
    """Bound the work before json.dumps runs: walk the value without recursion and stop as soon as it cannot fit in
    MAX_HYPERPARAMETER_CHARS, nests deeper than MAX_NESTING, or holds a NUL character.

    Each item walked adds at least one character to the count, so the walk ends after a few thousand steps
    whatever the input (a list repeated by reference a billion times, a cycle, 10,000 levels of nesting).
    """
    field = f"hyperparameters[{key!r}]"
    size, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_NESTING:
            raise ValueError(f"{field} nests lists/dicts more than {MAX_NESTING} levels deep; allowed: at most "
                             f"{MAX_NESTING} levels — flatten it, or pass it as a JSON string the script decodes")
        if isinstance(item, dict):
            size += 2 + 2 * len(item)
            children = [*item.keys(), *item.values()] if size <= MAX_HYPERPARAMETER_CHARS else []
        elif isinstance(item, (list, tuple)):
            size += 2 + len(item)
            children = list(item) if size <= MAX_HYPERPARAMETER_CHARS else []
        else:
            if isinstance(item, str) and "\x00" in item:
                raise ValueError(f"{field} contains a NUL character (\\x00) in {cut(item)!r}; jobs receive "
                                 "hyperparameters as arguments and environment variables, which cannot hold one; "
                                 "allowed: text without \\x00 — remove it")
            size += len(item) if isinstance(item, str) else 1
            children = []
        if size > MAX_HYPERPARAMETER_CHARS:
            raise ValueError(f"{field} encodes to more than {MAX_HYPERPARAMETER_CHARS} characters; allowed: at most "
                             f"{MAX_HYPERPARAMETER_CHARS} (SageMaker's limit) — pass large settings as an input "
                             "channel or a file in source_dir")
        stack.extend((child, depth + 1) for child in children)


def tags(v: Any) -> list[dict[str, str]] | None:
    if v is None:
        return None
    items = [{"Key": k, "Value": val} for k, val in v.items()] if isinstance(v, dict) else v
    if not isinstance(items, list):
        raise ValueError(f"tags={shown(v)} must be a list of {{'Key': …, 'Value': …}} or a dict")
    out = []
    for t in items:
        if not isinstance(t, dict) or set(t) != {"Key", "Value"} or not all(isinstance(x, str) for x in t.values()):
            raise ValueError(f"tags entry {shown(t)} must be {{'Key': str, 'Value': str}}")
        if not 1 <= len(t["Key"]) <= 128 or len(t["Value"]) > 256 or t["Key"].lower().startswith("aws:"):
            raise ValueError(f"tags entry {shown(t)}: Key 1-128 characters not starting with 'aws:', Value ≤ 256")
        out.append(dict(t))
    if len(out) > 50:
        raise ValueError(f"tags has {len(out)} entries; allowed: at most 50")
    return out


def hyperparameters(v: dict[str, Any] | None) -> dict[str, Any] | None:
    if v is None:
        return v
    if len(v) > MAX_HYPERPARAMETERS - 15:  # room for sagemaker_* and distribution entries
        raise ValueError(f"hyperparameters has {len(v)} entries; allowed: at most {MAX_HYPERPARAMETERS - 15}")
    for key, value in v.items():
        if not isinstance(key, str) or not 1 <= len(key) <= 256:
            raise ValueError(f"hyperparameters key {key!r} must be a string of 1-256 characters")
        if key in RESERVED_HYPERPARAMETERS or key == "mp_parameters":
            raise ValueError(f"hyperparameters[{key!r}] is set by sagelaunch; use a different name")
        if "\x00" in key:
            raise ValueError(f"hyperparameters key {cut(key)!r} contains a NUL character (\\x00); allowed: text "
                             "without \\x00 — remove it")
        _check_encoded_size(key, value)  # before json.dumps: its work is bounded from here on
        try:
            encoded = json.dumps(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"hyperparameters[{key!r}]={shown(value)} is not JSON-serialisable; allowed: str, int, float, "
                "bool, list, dict"
            ) from None
        if len(encoded) > MAX_HYPERPARAMETER_CHARS:
            raise ValueError(f"hyperparameters[{key!r}] encodes to {len(encoded)} characters; allowed: at most "
                             f"{MAX_HYPERPARAMETER_CHARS} (SageMaker's limit) — pass large settings as an input "
                             "channel or a file in source_dir")
    return v


def base_job_name(v: str | None) -> str | None:
    if v is not None and not NAME_PATTERN.match(v):
        cleaned = re.sub(r"[^a-zA-Z0-9-]+", "-", v or "").strip("-") or "my-job"
        raise ValueError(
            f"base_job_name={v!r} is not valid; allowed: letters, digits and hyphens (≤ 63); "
            f"did you mean {cleaned[:39]!r}?"
        )
    return v


def choice(field: str, v: str, allowed: tuple[str, ...]) -> str:
    if v not in allowed:
        raise ValueError(f"{field}={v!r} is not supported{did_you_mean(v, allowed)}; allowed: {', '.join(allowed)}")
    return v


METRIC_NAME_MAX, METRIC_REGEX_MAX, MAX_METRICS = 255, 500, 40  # SageMaker's MetricDefinition limits


def metric_definitions(v: list[dict[str, str]] | None) -> list[dict[str, str]] | None:
    if v is None:
        return v
    if not 0 < len(v) <= MAX_METRICS:
        raise ValueError(f"metric_definitions has {len(v)} entries; allowed: 1..{MAX_METRICS} (or omit it)")
    for m in v:
        if not isinstance(m, dict) or set(m) != {"Name", "Regex"} or not all(isinstance(x, str) for x in m.values()):
            raise ValueError(f"metric_definitions entry {shown(m)} must be {{'Name': str, 'Regex': str}}, e.g. "
                             "{'Name': 'train:loss', 'Regex': 'loss=([0-9.]+)'}")
        if not 0 < len(m["Name"]) <= METRIC_NAME_MAX or not 0 < len(m["Regex"]) <= METRIC_REGEX_MAX:
            raise ValueError(f"metric_definitions entry {shown(m)}: Name 1-{METRIC_NAME_MAX} characters, "
                             f"Regex 1-{METRIC_REGEX_MAX}")
        try:
            re.compile(m["Regex"])
        except re.error as err:
            raise ValueError(f"metric_definitions entry {m['Name']!r}: Regex {m['Regex']!r} is not a regular "
                             f"expression ({err}); allowed: a regex whose first group captures the value") from None
    return v


def string_list(field: str, v: list[str] | None, max_items: int = 100, max_chars: int = 256) -> list[str] | None:
    """ContainerEntrypoint / ContainerArguments: SageMaker's limits are 100 strings of 1-256 characters."""
    if v is None:
        return v
    if not 0 < len(v) <= max_items:
        raise ValueError(f"{field} has {len(v)} entries; allowed: 1..{max_items}, e.g. ['python', 'train.py']")
    for item in v:
        if not isinstance(item, str) or not 0 < len(item) <= max_chars or "\x00" in item:
            raise ValueError(f"{field} entry {shown(item)} is not valid; allowed: text of 1-{max_chars} characters")
    return v


def dependencies(v: list[str] | None) -> list[str] | None:
    if v is None:
        return v
    for item in v:
        if not isinstance(item, str) or not item or "\x00" in item or item.startswith("s3://"):
            raise ValueError(f"dependencies entry {shown(item)} is not valid; allowed: local files or folders, "
                             "shipped at the code's root under their own names, e.g. ['lib/my_utils']")
    return v


CHANNEL_NAME = re.compile(r"^[A-Za-z0-9.\-_]{1,64}$")


def channel_name(field: str, v: str) -> str:
    if not CHANNEL_NAME.match(v):
        raise ValueError(f"{field}={v!r} is not a channel name; allowed: 1-64 of A-Z a-z 0-9 . - _, e.g. 'model'")
    return v


def model_uri(v: str | None) -> str | None:
    """An s3:// URI (a SageMaker job's model channel) or a local file/folder (local jobs)."""
    if v is None:
        return v
    if v.lower().startswith("s3:") or v.startswith("s3/"):
        return s3_uri("model_uri", v)
    if not v or "\x00" in v:
        raise ValueError(f"model_uri={shown(v)} must be s3://<bucket>/<key> (e.g. …/model.tar.gz) or, for local "
                         "jobs, a local file or folder")
    return v
