"""TrainingInput and ShuffleConfig (the SageMaker SDK v2's names, arguments and positions) and the
conversion of `fit(inputs)` to InputChannels."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from sagelaunch.estimators import field_checks as check
from sagelaunch.jobspec.errors import SagelaunchError, shown
from sagelaunch.jobspec.positional import bind_positional
from sagelaunch.jobspec.s3uri import S3_URI
from sagelaunch.jobspec.spec import InputChannel
from sagelaunch.launcher import channel_request

INPUT_MODES = ("File", "Pipe", "FastFile")
DISTRIBUTIONS = ("FullyReplicated", "ShardedByS3Key")
S3_DATA_TYPES = ("S3Prefix", "ManifestFile", "AugmentedManifestFile")
COMPRESSIONS = ("None", "Gzip")
RECORD_WRAPPINGS = ("None", "RecordIO")
# the SDK v2's positional order of TrainingInput's arguments
POSITIONAL = ("s3_data", "distribution", "compression", "content_type", "record_wrapping", "s3_data_type",
              "instance_groups", "input_mode", "attribute_names", "target_attribute_name", "shuffle_config",
              "hub_access_config", "model_access_config")
# what a local job cannot do with a channel: the setting, and why
LOCAL_REFUSED = {
    "compression": "local jobs read the files as they are (CompressionType applies to Pipe mode)",
    "record_wrapping": "local jobs read the files as they are (RecordWrapperType applies to Pipe mode)",
    "shuffle_config": "local jobs read a prefix's files in their order (ShuffleConfig is SageMaker's)",
    "instance_groups": "a local job has no instance groups",
}


class ShuffleConfig(BaseModel):
    """`ShuffleConfig(seed)`: SageMaker shuffles the channel's S3 objects with this seed."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    seed: int

    def __init__(self, seed: int | None = None, /, **data: Any) -> None:
        if seed is not None:
            data["seed"] = seed
        super().__init__(**data)


class TrainingInput(BaseModel):
    """One channel's data: `TrainingInput("s3://bucket/train", content_type="text/csv")`."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    s3_data: str
    distribution: str | None = None  # None: FullyReplicated, or left out with target_attribute_name (as v2)
    compression: str | None = None
    content_type: str | None = None
    record_wrapping: str | None = None
    s3_data_type: str = "S3Prefix"
    instance_groups: list[str] | None = None
    input_mode: str | None = None  # None: the estimator's input_mode
    attribute_names: list[str] | None = None
    target_attribute_name: str | None = None
    shuffle_config: ShuffleConfig | None = None
    hub_access_config: dict[str, Any] | None = None
    model_access_config: dict[str, Any] | None = None

    def __init__(self, *args: Any, **data: Any) -> None:
        super().__init__(**bind_positional("TrainingInput", POSITIONAL, args, data))

    _distribution = field_validator("distribution")(
        classmethod(lambda cls, v: v if v is None else check.choice("distribution", v, DISTRIBUTIONS)))
    _compression = field_validator("compression")(
        classmethod(lambda cls, v: v if v is None else check.choice("compression", v, COMPRESSIONS)))
    _wrapping = field_validator("record_wrapping")(
        classmethod(lambda cls, v: v if v is None else check.choice("record_wrapping", v, RECORD_WRAPPINGS)))
    _data_type = field_validator("s3_data_type")(
        classmethod(lambda cls, v: check.choice("s3_data_type", v, S3_DATA_TYPES)))
    _mode = field_validator("input_mode")(
        classmethod(lambda cls, v: v if v is None else check.choice("input_mode", v, INPUT_MODES)))

    @field_validator("instance_groups", "attribute_names")
    @classmethod
    def _names(cls, v: list[str] | None, info: Any) -> list[str] | None:
        if v is not None and (not v or not all(isinstance(x, str) and 0 < len(x) <= 256 for x in v)):
            raise SagelaunchError(f"{info.field_name}={shown(v)} must be a non-empty list of names (1-256 characters)",
                                  field=info.field_name, value=v, allowed="a non-empty list of names (1-256 characters)",
                                  fix="give at least one name")
        return v

    @property
    def config(self) -> dict[str, Any]:
        """The channel as the SDK v2's TrainingInput.config holds it (InputDataConfig without ChannelName)."""
        channel = channel_request(self.to_channel("training"))
        del channel["ChannelName"]
        return channel

    def to_channel(self, name: str, default_mode: str = "File") -> InputChannel:
        distribution = self.distribution
        if distribution is None and not self.target_attribute_name:
            distribution = "FullyReplicated"  # the SDK v2's default, sent explicitly
        return InputChannel(
            name=name, uri=self.s3_data, content_type=self.content_type, input_mode=self.input_mode or default_mode,
            mode_given=self.input_mode is not None, s3_data_type=self.s3_data_type, distribution=distribution,
            compression=self.compression, record_wrapping=self.record_wrapping,
            instance_groups=tuple(self.instance_groups) if self.instance_groups is not None else None,
            attribute_names=tuple(self.attribute_names) if self.attribute_names is not None else None,
            target_attribute_name=self.target_attribute_name,
            shuffle_seed=self.shuffle_config.seed if self.shuffle_config is not None else None,
            hub_access_config=self.hub_access_config, model_access_config=self.model_access_config,
        )


def to_channels(inputs: Any, *, local: bool, input_mode: str = "File") -> tuple[InputChannel, ...]:
    """None | "s3://…" | TrainingInput | {"name": str | TrainingInput} → channels (str alone = "training").

    A channel without its own input_mode takes the estimator's (`input_mode`)."""
    if inputs is None:
        return ()
    if isinstance(inputs, (str, TrainingInput)):
        inputs = {"training": inputs}
    if not isinstance(inputs, dict):
        allowed = "an S3 URI, a TrainingInput or a dict of channel name → URI/TrainingInput"
        raise SagelaunchError(f"inputs={inputs!r} must be {allowed}", field="inputs", value=inputs, allowed=allowed,
                              fix="e.g. {'train': 's3://my-bucket/train'}")
    channels = []
    for name, value in inputs.items():
        check.channel_name("inputs channel", name)
        ti = value if isinstance(value, TrainingInput) else TrainingInput(s3_data=value) if isinstance(value, str) else None
        if ti is None:
            raise SagelaunchError(f"inputs[{name!r}]={value!r} must be a URI string or a TrainingInput",
                                  field=f"inputs[{name!r}]", value=value, allowed="a URI string or a TrainingInput",
                                  fix="e.g. 's3://my-bucket/train'")
        uri = ti.s3_data
        check.local_path(f"inputs[{name!r}]", uri)
        if uri.startswith("s3://"):
            if not S3_URI.match(uri):
                raise SagelaunchError(f"inputs[{name!r}]={uri!r} is not a valid S3 URI; allowed: s3://<bucket>/<prefix>",
                                      field=f"inputs[{name!r}]", value=uri, allowed="s3://<bucket>/<prefix>",
                                      fix="write s3://<bucket>/<prefix>")
        elif not local:
            fix = "upload it and pass s3://<bucket>/<prefix>, or run with instance_type='local'"
            raise SagelaunchError(f"inputs[{name!r}]={uri!r}: a SageMaker job reads its data from S3; {fix}",
                                  field=f"inputs[{name!r}]", value=uri, allowed="s3://<bucket>/<prefix>", fix=fix)
        elif not uri:
            raise SagelaunchError(f"inputs[{name!r}] is empty; give a folder or an s3:// URI", field=f"inputs[{name!r}]",
                                  value=uri, allowed="a folder or an s3:// URI", fix="give a folder or an s3:// URI")
        if ti.target_attribute_name is not None:  # v2 passes it on and botocore refuses the request
            fix = "drop it (your script decides which column it predicts)"
            raise SagelaunchError(f"inputs[{name!r}]: TrainingInput(target_attribute_name={ti.target_attribute_name!r}) "
                                  "is for SageMaker AutoML jobs; a training job's channels have no TargetAttributeName "
                                  f"— {fix}", field=f"inputs[{name!r}].target_attribute_name",
                                  value=ti.target_attribute_name, allowed="None", fix=fix)
        if local:
            for field, why in LOCAL_REFUSED.items():
                if getattr(ti, field) is not None:
                    raise SagelaunchError(f"inputs[{name!r}]: TrainingInput({field}={shown(getattr(ti, field))}) is "
                                          f"not available in local jobs: {why}; drop it for a local run, or run on "
                                          "SageMaker", field=f"inputs[{name!r}].{field}", value=getattr(ti, field),
                                          allowed="unset in local jobs", fix="drop it for a local run, or run on SageMaker")
        channels.append(ti.to_channel(name, input_mode))
    return tuple(channels)
