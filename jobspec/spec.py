"""TrainingJobSpec: the one typed description of a training job, in parts that each map to one request shape
(code, compute, inputs, stopping, output, network, observability: launcher.common.request has one builder per part).

Estimators build it (after validating every field); backends run it. It is frozen:
a backend that learns something at submit time (the code bucket, say) makes a
validated copy with `replace(spec, field=value)` — pydantic's `model_copy(update=...)`
would skip validation and accept `instance_count="not-a-number"`. Only the standard
library and pydantic are imported here.
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from sagelaunch.jobspec import fields
from sagelaunch.jobspec.contract import DEFAULT_CPU_PROFILING_DURATION_S, DEFAULT_FILE_ROTATION_S
from sagelaunch.jobspec.distribution import DistributionSpec
from sagelaunch.jobspec.instance_types import is_local


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)  # build validators on first use: fast import


class InputChannel(_Frozen):
    """One data channel: `SM_CHANNEL_<NAME>` inside the job."""

    name: str
    uri: str  # s3://bucket/prefix, file:///abs/path, or a plain local path
    content_type: str | None = None
    input_mode: Literal["File", "Pipe", "FastFile"] = "File"
    s3_data_type: Literal["S3Prefix", "ManifestFile", "AugmentedManifestFile"] = "S3Prefix"
    distribution: Literal["FullyReplicated", "ShardedByS3Key"] | None = "FullyReplicated"  # None: not sent
    # TrainingInput's other settings, sent as the SDK v2 sends them (None: left out of the request)
    compression: Literal["None", "Gzip"] | None = None
    record_wrapping: Literal["None", "RecordIO"] | None = None
    instance_groups: tuple[str, ...] | None = None
    attribute_names: tuple[str, ...] | None = None
    target_attribute_name: str | None = None
    shuffle_seed: int | None = None
    hub_access_config: dict[str, Any] | None = None
    model_access_config: dict[str, Any] | None = None
    mode_given: bool = False  # True when the user set input_mode on this channel (sent as InputMode)

    _name = field_validator("name")(classmethod(lambda cls, v: fields.channel_name("channel name", v)))
    _uri = field_validator("uri")(classmethod(lambda cls, v: fields.local_path("channel uri", v)))


class InstanceGroupSpec(_Frozen):
    """One group of a heterogeneous cluster (ResourceConfig.InstanceGroups)."""

    name: str
    instance_type: str
    instance_count: int


class ProfilerSettings(_Frozen):
    """What ProfilerConfig/Profiler add to a job (values already validated)."""

    s3_output_path: str | None = None
    system_monitor_interval_millis: int | None = None
    cpu_profiling_duration: int = DEFAULT_CPU_PROFILING_DURATION_S  # seconds of detailed (Kineto) capture
    file_rotation_interval: int = DEFAULT_FILE_ROTATION_S  # SMPFileRotationSecs
    disable_profiler: bool = False
    detailed: bool = False  # SageMaker Profiler's detailed capture (ProfilingParameters); False: monitoring only
    framework_profile_parameters: dict[str, str] | None = None  # Debugger's framework profiling, as v2 sends it


class DebugRuleSettings(_Frozen):
    """One Debugger or Profiler rule as CreateTrainingJob takes it (evaluator image already chosen)."""

    name: str
    image_uri: str
    instance_type: str | None = None
    volume_size_in_gb: int | None = None
    local_path: str | None = None
    s3_output_path: str | None = None
    parameters: dict[str, str] = Field(default_factory=dict)


class DebugCollection(_Frozen):
    name: str
    parameters: dict[str, str] | None = None


class DebugHookSettings(_Frozen):
    """SageMaker Debugger's hook (DebugHookConfig): which tensors the job saves, and where."""

    s3_output_path: str | None = None  # None: the job's output path
    local_path: str | None = None
    hook_parameters: dict[str, str] | None = None
    collections: tuple[DebugCollection, ...] = ()


class TensorBoardSettings(_Frozen):
    s3_output_path: str
    local_path: str | None = None


class CodeSpec(_Frozen):
    """What runs and what it is told: AlgorithmSpecification, HyperParameters and Environment."""

    entry_point: str  # file name relative to source_dir (or the lone file's name)
    source_dir: str | None = None  # local folder, or an s3:// sourcedir.tar.gz; None = folder of entry_point
    entry_point_path: str | None = None  # absolute local path of the entry point when source_dir is None
    ignore_patterns: tuple[str, ...] = ()
    submit_directory: str | None = None  # s3:// URI of the uploaded sourcedir.tar.gz (set by the backend)
    dependencies: tuple[str, ...] = ()  # local files/folders packed at the code archive's root
    code_location: str | None = None  # s3://bucket[/prefix] for the code archive

    # what the script sees
    hyperparameters: dict[str, Any] = Field(default_factory=dict)  # the user's, raw values
    environment: dict[str, str] = Field(default_factory=dict)
    model_dir: str | None = None  # TensorFlow's model_dir hyperparameter, as given
    default_model_dir: bool = False  # TensorFlow: send SDK v2's default model_dir (s3://<output>/<job>/model)
    container_log_level: int = 20

    # distribution, already validated by estimators.distribution (SMP parameters by jobspec.smp): typed, written
    # into the hyperparameters once (jobspec.distribution)
    distribution: DistributionSpec = Field(default_factory=DistributionSpec)

    # AlgorithmSpecification's settings, sent as the SDK v2 sends them (None: left out of the request)
    input_mode: Literal["File", "Pipe", "FastFile"] = "File"  # TrainingInputMode
    metric_definitions: tuple[tuple[str, str], ...] | None = None  # (Name, Regex)
    enable_sagemaker_metrics: bool | None = True
    container_entry_point: tuple[str, ...] | None = None
    container_arguments: tuple[str, ...] | None = None

    # SDK v2's generic Estimator: without an entry point the image runs its own program (no code archive, no
    # sagemaker_* hyperparameters); without a source_dir its hyperparameters are sent as str(value), not JSON
    ships_code: bool = True
    hyperparameters_as_text: bool = False

    # the shared checks of names, keys and paths (jobspec.fields): a spec made any way is checked as estimators check
    _hyperparameters = field_validator("hyperparameters")(classmethod(lambda cls, v: fields.hyperparameters(v)))
    _environment = field_validator("environment")(classmethod(lambda cls, v: fields.environment(v)))

    @field_validator("source_dir", "entry_point", "entry_point_path")
    @classmethod
    def _path(cls, v: str | None, info: Any) -> str | None:
        return fields.local_path(info.field_name, v)

    @field_validator("dependencies")
    @classmethod
    def _dependencies(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for item in v:
            fields.local_path("dependencies entry", item)
        return v


class ComputeSpec(_Frozen):
    """Where it runs: ResourceConfig (and how many processes each host starts)."""

    instance_type: str
    instance_count: int = 1
    gpus_per_host: int = 0  # from the support matrix; 0 for CPU instances and "local"
    processes_per_host: int = 1  # torchrun --nproc_per_node: distribution, else GPUs, else 1
    volume_size: int = 30
    volume_kms_key: str | None = None
    keep_alive_period_in_seconds: int | None = None
    instance_groups: tuple[InstanceGroupSpec, ...] = ()  # set: ResourceConfig has these instead of type/count


class StoppingSpec(_Frozen):
    """When it ends: StoppingCondition, managed spot training and retries."""

    max_run: int = 24 * 60 * 60
    max_wait: int | None = None
    use_spot_instances: bool = False
    max_retry_attempts: int | None = None


class OutputSpec(_Frozen):
    """Where results go: OutputDataConfig and CheckpointConfig."""

    output_path: str | None = None  # s3://… or a local folder
    output_kms_key: str | None = None
    disable_output_compression: bool = False
    checkpoint_s3_uri: str | None = None
    checkpoint_local_path: str | None = None

    @field_validator("output_path", "checkpoint_local_path")
    @classmethod
    def _path(cls, v: str | None, info: Any) -> str | None:
        return fields.local_path(info.field_name, v)


class NetworkSpec(_Frozen):
    """VpcConfig, network isolation and inter-container encryption."""

    subnets: tuple[str, ...] | None = None
    security_group_ids: tuple[str, ...] | None = None
    enable_network_isolation: bool = False
    encrypt_inter_container_traffic: bool = False


class ObservabilitySpec(_Frozen):
    """The profiler, Debugger and TensorBoard: ProfilerConfig, DebugHookConfig, the rules, TensorBoardOutputConfig."""

    profiler: ProfilerSettings | None = None  # None: no profiler at all
    profiler_rules: tuple[DebugRuleSettings, ...] = ()
    debug_hook: DebugHookSettings | None = None  # None: no Debugger hook
    debug_rules: tuple[DebugRuleSettings, ...] = ()
    tensorboard_output: TensorBoardSettings | None = None


class TrainingJobSpec(_Frozen):
    """A job: who and which image (these fields), then one typed part per request shape."""

    # its environment and hyperparameters may hold secrets: pydantic's messages never repeat the input (errors()
    # still has it; sagelaunch's own messages mask secret-looking values)
    model_config = ConfigDict(**_Frozen.model_config, hide_input_in_errors=True)

    job_name: str
    framework: Literal["pytorch", "tensorflow", "generic"]  # generic: v2's Estimator(image_uri)
    framework_version: str
    py_version: str
    image_uri: str
    region: str
    role: str | None = None
    tags: tuple[tuple[str, str], ...] = ()

    code: CodeSpec
    compute: ComputeSpec
    inputs: tuple[InputChannel, ...] = ()
    stopping: StoppingSpec = Field(default_factory=StoppingSpec)
    output: OutputSpec = Field(default_factory=OutputSpec)
    network: NetworkSpec = Field(default_factory=NetworkSpec)
    observability: ObservabilitySpec = Field(default_factory=ObservabilitySpec)

    @field_validator("inputs")
    @classmethod
    def _inputs(cls, v: tuple[InputChannel, ...]) -> tuple[InputChannel, ...]:
        fields.channel_count(len(v))
        return v

    @property
    def is_local(self) -> bool:
        return is_local(self.compute.instance_type)


PARTS: dict[str, type[BaseModel]] = {"code": CodeSpec, "compute": ComputeSpec, "stopping": StoppingSpec,
                                     "output": OutputSpec, "network": NetworkSpec, "observability": ObservabilitySpec}
# each part's field → its part (the names are unique across parts and the spec's own fields)
PART_OF = {name: part for part, model in PARTS.items() for name in model.model_fields}


def _grouped(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """`changes` applied to a spec's dump, a field of a part named directly going to its part."""
    merged = dict(current)
    for name, value in changes.items():
        part = PART_OF.get(name)
        if part is None:
            merged[name] = value
        else:
            merged[part] = {**(merged.get(part) or {}), name: value}
    return merged


def spec_from_fields(**named: Any) -> TrainingJobSpec:
    """A spec from its fields named directly (each part's field goes to its part): for scripts and tests."""
    return TrainingJobSpec.model_validate(_grouped({}, named))


_Model = TypeVar("_Model", bound=BaseModel)


def replace(model: _Model, **changes: Any) -> _Model:
    """A validated copy of a frozen model with `changes` applied (every field is checked again). On a spec, a part's
    field may be named directly: `replace(spec, instance_count=2)` changes `spec.compute.instance_count`.

    `replace(spec, instance_count="not-a-number")` raises pydantic's ValidationError naming the field.
    """
    current = model.model_dump()
    merged = _grouped(current, changes) if isinstance(model, TrainingJobSpec) else {**current, **changes}
    return type(model).model_validate(merged)
