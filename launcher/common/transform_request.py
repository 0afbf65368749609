"""The CreateTransformJob request of SDK v2's Transformer.transform (pure: no network), and its settings' rules."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.suggest import did_you_mean, fix_from_hint

SPLIT_TYPES = ("None", "Line", "RecordIO", "TFRecord")
STRATEGIES = ("MultiRecord", "SingleRecord")
ASSEMBLE_WITH = ("None", "Line")
DATA_TYPES = ("S3Prefix", "ManifestFile", "AugmentedManifestFile")
COMPRESSION_TYPES = ("None", "Gzip")
JOIN_SOURCES = ("None", "Input")
DEFAULT_MAX_PAYLOAD_MB = 6  # SageMaker's default MaxPayloadInMB
MAX_PAYLOAD_LIMIT_MB = 100


def _choice(name: str, value: str | None, allowed: tuple[str, ...]) -> str | None:
    if value is not None and value not in allowed:
        fix = fix_from_hint(did_you_mean(str(value), allowed), f"use one of {', '.join(allowed)}")
        raise SagelaunchError(f"{name}={value!r} is not one of {', '.join(allowed)}; {fix}", field=name, value=value,
                              allowed=", ".join(allowed), fix=fix)
    return value


@dataclass(frozen=True)
class TransformSettings:
    """What one transform job is asked to do: the Transformer's settings plus transform()'s arguments."""

    job_name: str
    model_name: str
    instance_count: int
    instance_type: str
    data: str
    output_path: str
    data_type: str = "S3Prefix"
    content_type: str | None = None
    compression_type: str | None = None
    split_type: str | None = None
    strategy: str | None = None
    assemble_with: str | None = None
    accept: str | None = None
    max_concurrent_transforms: int | None = None
    max_payload: int | None = None
    output_kms_key: str | None = None
    volume_kms_key: str | None = None
    env: dict[str, str] = field(default_factory=dict)
    tags: tuple[dict[str, str], ...] = ()
    input_filter: str | None = None
    output_filter: str | None = None
    join_source: str | None = None

    def __post_init__(self) -> None:
        _choice("split_type", self.split_type, SPLIT_TYPES)
        _choice("strategy", self.strategy, STRATEGIES)
        _choice("assemble_with", self.assemble_with, ASSEMBLE_WITH)
        _choice("data_type", self.data_type, DATA_TYPES)
        _choice("compression_type", self.compression_type, COMPRESSION_TYPES)
        _choice("join_source", self.join_source, JOIN_SOURCES)
        if self.max_payload is not None and not 0 <= self.max_payload <= MAX_PAYLOAD_LIMIT_MB:
            raise SagelaunchError(f"max_payload={self.max_payload} MB is out of range; allowed: 0 to "
                                  f"{MAX_PAYLOAD_LIMIT_MB}", field="max_payload", value=self.max_payload,
                                  allowed=f"0 to {MAX_PAYLOAD_LIMIT_MB}", fix="use a value in range")
        if self.instance_count < 1:
            raise SagelaunchError(f"instance_count={self.instance_count} must be at least 1", field="instance_count",
                                  value=self.instance_count, allowed="1 or more", fix="use 1")


def create_transform_job_request(s: TransformSettings) -> dict[str, Any]:
    """CreateTransformJob with exactly the keys SDK v2 2.257 sends: optional ones only when set."""
    source: dict[str, Any] = {"S3DataSource": {"S3DataType": s.data_type, "S3Uri": s.data}}
    transform_input: dict[str, Any] = {"DataSource": source}
    for key, value in (("ContentType", s.content_type), ("CompressionType", s.compression_type),
                       ("SplitType", s.split_type)):
        if value is not None:
            transform_input[key] = value
    output: dict[str, Any] = {"S3OutputPath": s.output_path}
    for key, value in (("KmsKeyId", s.output_kms_key), ("AssembleWith", s.assemble_with), ("Accept", s.accept)):
        if value is not None:
            output[key] = value
    resources: dict[str, Any] = {"InstanceCount": s.instance_count, "InstanceType": s.instance_type}
    if s.volume_kms_key is not None:
        resources["VolumeKmsKeyId"] = s.volume_kms_key
    request: dict[str, Any] = {"TransformJobName": s.job_name, "ModelName": s.model_name,
                               "TransformInput": transform_input, "TransformOutput": output,
                               "TransformResources": resources}
    optional: tuple[tuple[str, Any], ...] = (
        ("BatchStrategy", s.strategy), ("MaxConcurrentTransforms", s.max_concurrent_transforms),
        ("MaxPayloadInMB", s.max_payload), ("Environment", s.env or None), ("Tags", list(s.tags) or None))
    for key, value in optional:
        if value is not None:
            request[key] = value
    processing = {k: v for k, v in (("InputFilter", s.input_filter), ("OutputFilter", s.output_filter),
                                    ("JoinSource", s.join_source)) if v is not None}
    if processing:
        request["DataProcessing"] = processing
    return request
