"""TrainingInput (SageMaker-SDK-like) and the conversion of `fit(inputs)` to InputChannels."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from jobspec.s3uri import S3_URI
from jobspec.spec import InputChannel

CHANNEL_NAME = re.compile(r"^[A-Za-z0-9.\-_]{1,64}$")


class TrainingInput(BaseModel):
    """One channel's data: `TrainingInput("s3://bucket/train", content_type="text/csv")`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    s3_data: str
    content_type: str | None = None
    input_mode: Literal["File", "Pipe", "FastFile"] | None = None
    distribution: Literal["FullyReplicated", "ShardedByS3Key"] = "FullyReplicated"
    s3_data_type: Literal["S3Prefix", "ManifestFile", "AugmentedManifestFile"] = "S3Prefix"

    def __init__(self, s3_data: str | None = None, /, **data: Any) -> None:
        if s3_data is not None:
            data["s3_data"] = s3_data
        super().__init__(**data)


def is_local_uri(uri: str) -> bool:
    return not uri.startswith("s3://")


def to_channels(inputs: Any, *, local: bool) -> tuple[InputChannel, ...]:
    """None | "s3://…" | TrainingInput | {"name": str | TrainingInput} → channels (str alone = "training")."""
    if inputs is None:
        return ()
    if isinstance(inputs, (str, TrainingInput)):
        inputs = {"training": inputs}
    if not isinstance(inputs, dict):
        raise ValueError(
            f"inputs={inputs!r} must be an S3 URI, a TrainingInput or a dict of channel name → URI/TrainingInput"
        )
    channels = []
    for name, value in inputs.items():
        if not isinstance(name, str) or not CHANNEL_NAME.match(name):
            raise ValueError(f"inputs: channel name {name!r} is not valid; allowed: 1-64 of A-Z a-z 0-9 . - _")
        ti = value if isinstance(value, TrainingInput) else TrainingInput(s3_data=value) if isinstance(value, str) else None
        if ti is None:
            raise ValueError(f"inputs[{name!r}]={value!r} must be a URI string or a TrainingInput")
        uri = ti.s3_data
        if "\x00" in uri:
            raise ValueError(f"inputs[{name!r}]={uri!r} contains a NUL character (\\x00), which no path or URI can "
                             "hold; remove it")
        if uri.startswith("s3://"):
            if not S3_URI.match(uri):
                raise ValueError(f"inputs[{name!r}]={uri!r} is not a valid S3 URI; allowed: s3://<bucket>/<prefix>")
        elif not local:
            raise ValueError(
                f"inputs[{name!r}]={uri!r}: a SageMaker job reads its data from S3; upload it and pass "
                "s3://<bucket>/<prefix>, or run with instance_type='local'"
            )
        elif not uri:
            raise ValueError(f"inputs[{name!r}] is empty; give a folder or an s3:// URI")
        channels.append(InputChannel(
            name=name, uri=uri, content_type=ti.content_type, input_mode=ti.input_mode or "File",
            s3_data_type=ti.s3_data_type, distribution=ti.distribution,
        ))
    return tuple(channels)
