"""A transform job run here (instance_type="local"): the model served by the local endpoint over every input file.

As SageMaker's batch transform does: each file's records are split by `split_type` ("Line": one record a line,
"None": the file is one record), sent one per request ("SingleRecord") or as many as fit in `max_payload` MB
("MultiRecord"); the answers are written to `<output>/<file's path under the input>.out`, joined by a newline with
assemble_with="Line". A record larger than max_payload, or a request the model answers with an error, fails the job
naming the file, as SageMaker fails it. RecordIO/TFRecord splitting and the JSONPath filters are SageMaker's:
refused before the job starts.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.s3uri import key_destination, parse_s3_uri
from sagelaunch.launcher.common.aws.clients import client
from sagelaunch.launcher.common.safe_write import complete_file
from sagelaunch.launcher.common.transform_request import (
    DEFAULT_MAX_PAYLOAD_MB,
    TransformSettings,
    create_transform_job_request,
)
from sagelaunch.launcher.sagemaker.transform import SageMakerTransformJob, TransformJobFailedError

_LOCAL_JOBS: dict[str, "LocalTransformJob"] = {}  # this process's local transform jobs, by name


def local_transform_job(name: str) -> "LocalTransformJob | None":
    return _LOCAL_JOBS.get(name)


def check_local_settings(s: TransformSettings) -> None:
    """What a local transform cannot do, refused by name before it starts."""
    refused = {"split_type": s.split_type if s.split_type in ("RecordIO", "TFRecord") else None,
               "input_filter": s.input_filter, "output_filter": s.output_filter,
               "join_source": s.join_source if s.join_source == "Input" else None,
               "data_type": s.data_type if s.data_type != "S3Prefix" else None,
               "compression_type": s.compression_type if s.compression_type == "Gzip" else None}
    for name, value in refused.items():
        if value is not None:
            fix = f"drop {name} (locally: split_type 'Line' or 'None', S3Prefix data, no filters) or run on an ml.* type"
            raise SagelaunchError(f"{name}={value!r} is not supported by a local transform job; {fix}", field=name,
                                  value=value, allowed="unset locally", fix=fix)


def _records(data: bytes, split_type: str | None) -> list[bytes]:
    if split_type == "Line":
        return [line + b"\n" for line in data.splitlines() if line.strip()]
    return [data]


def _batches(records: list[bytes], strategy: str | None, max_bytes: int, where: str) -> list[bytes]:
    """Requests of one file: one record each (SingleRecord), or as many records as fit in max_bytes (MultiRecord)."""
    batches: list[bytes] = []
    current = b""
    for record in records:
        if max_bytes and len(record) > max_bytes:
            raise SagelaunchError(f"{where}: a record of {len(record)} bytes exceeds MaxPayloadInMB "
                                  f"({max_bytes // (1024 * 1024)} MB); raise max_payload or split the input",
                                  field="max_payload", value=max_bytes // (1024 * 1024),
                                  allowed=f"a payload of at least {len(record)} bytes",
                                  fix="raise max_payload or split the input")
        if strategy != "MultiRecord" or (current and max_bytes and len(current) + len(record) > max_bytes):
            if current:
                batches.append(current)
            current = b""
        current += record
    if current:
        batches.append(current)
    return batches


class LocalTransformJob:
    """A local transform job's handle: describe() as DescribeTransformJob answers, wait()."""

    backend = "local"

    def __init__(self, settings: TransformSettings) -> None:
        self.settings = settings
        self.name = self.job_name = settings.job_name
        self.status: str = "InProgress"
        self.reason: str | None = None
        self.created = datetime.now(timezone.utc)
        self.ended: datetime | None = None
        self.outputs: list[str] = []

    def describe(self) -> dict[str, Any]:
        description = {**create_transform_job_request(self.settings), "TransformJobStatus": self.status,
                       "CreationTime": self.created}
        if self.reason:
            description["FailureReason"] = self.reason
        if self.ended:
            description["TransformEndTime"] = self.ended
        return description

    def wait(self, logs: bool = False) -> dict[str, Any]:
        if self.status != "Completed":
            raise TransformJobFailedError(self.name, self.status, self.reason)
        return self.describe()

    def run(self, invoke: Callable[[bytes, str, str], bytes], region: str | None) -> None:
        """Every input file through `invoke(body, content_type, accept)`; the outputs written as SageMaker does."""
        s = self.settings
        max_bytes = (DEFAULT_MAX_PAYLOAD_MB if s.max_payload is None else s.max_payload) * 1024 * 1024
        scratch = tempfile.mkdtemp(prefix="sagelaunch-transform-")
        try:
            inputs = _input_files(s.data, Path(scratch) / "in", region)
            for relative, path in inputs:
                answers = [invoke(batch, s.content_type or "application/octet-stream", s.accept or "application/json")
                           for batch in _batches(_records(path.read_bytes(), s.split_type), s.strategy, max_bytes,
                                                 f"input {relative}")]
                joiner = b"\n" if s.assemble_with == "Line" else b""
                body = joiner.join(a.rstrip(b"\n") if s.assemble_with == "Line" else a for a in answers)
                self.outputs.append(_write_output(s.output_path, relative + ".out", body, region))
            self.status = "Completed"
        except (ValueError, OSError, RuntimeError) as err:
            self.status, self.reason = "Failed", str(err)
        finally:
            self.ended = datetime.now(timezone.utc)
            shutil.rmtree(scratch, ignore_errors=True)


def _input_files(data: str, scratch: Path, region: str | None) -> list[tuple[str, Path]]:
    """(path under the input prefix, local file) of every input object, in key order."""
    if data.startswith("s3://"):
        bucket, prefix = parse_s3_uri(data)
        s3 = client("s3", region)
        found = []
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                if item["Key"].endswith("/"):
                    continue
                relative = item["Key"][len(prefix):].lstrip("/") or os.path.basename(item["Key"])
                local = key_destination(str(scratch), item["Key"], os.path.basename(item["Key"]))
                s3.download_file(bucket, item["Key"], str(local))
                found.append((relative, Path(local)))
        if not found:
            raise SagelaunchError(f"no input object at or under {data}", field="data", value=data,
                                  allowed="an S3 prefix holding at least one object",
                                  fix="upload the input first, or name the prefix it is under")
        return sorted(found)
    root = Path(data.removeprefix("file://"))
    if root.is_file():
        return [(root.name, root)]
    if not root.is_dir():
        raise SagelaunchError(f"input {data}: no such file or folder", field="data", value=data,
                              allowed="an existing file or folder, or an s3:// prefix", fix="check the path")
    return sorted((str(p.relative_to(root)), p) for p in root.rglob("*") if p.is_file())


def _write_output(output_path: str, relative: str, body: bytes, region: str | None) -> str:
    if output_path.startswith("s3://"):
        bucket, prefix = parse_s3_uri(output_path)
        key = "/".join(p for p in (prefix.strip("/"), relative) if p)
        client("s3", region).put_object(Bucket=bucket, Key=key, Body=body)
        return f"s3://{bucket}/{key}"

    target = Path(output_path.removeprefix("file://")) / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    with complete_file(target) as partial:
        partial.write_bytes(body)
    return str(target)


def find_transform_job(name: str, region: str, boto_session: Any = None) -> Any:
    """The transform job called `name`: a local one run in this process first, else SageMaker's."""
    return local_transform_job(name) or SageMakerTransformJob(name, region, boto_session)


def run_local_transform(settings: TransformSettings, invoke: Callable[[bytes, str, str], bytes],
                        region: str | None) -> LocalTransformJob:
    check_local_settings(settings)
    job = _LOCAL_JOBS[settings.job_name] = LocalTransformJob(settings)
    job.run(invoke, region)
    return job
