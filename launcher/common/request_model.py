"""The compiled CreateTrainingJob request as a typed record, read by attribute (the local backend reads its own
request back this way, not through string keys).

Every class mirrors one shape of botocore's service model for sagemaker, field for field: the wire name is the
field's alias, its type the shape's (structure → a class here, list → tuple, map → dict, string/integer/boolean).
`tests/local/test_request_model.py` walks botocore's CreateTrainingJobRequest and checks each class against it, as
sagemaker-core generates its classes from the same model. The wire form stays the plain dict
`launcher.request.compile_create_training_job_request` builds (the one the SageMaker backend sends);
`TrainingJobRequest.of(wire)` reads it, `wire()` gives it back equal.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_pascal


# Wire names sagelaunch sends as SDK v2 does although botocore's model lacks them (so botocore's validation refuses
# such a request, as it refuses v2's): TrainingInput(target_attribute_name=…) in a training job's channel.
NOT_IN_BOTOCORE = frozenset({"Channel.TargetAttributeName"})


class Shape(BaseModel):
    """One botocore structure: fields in snake_case, their wire names (PascalCase) as aliases."""

    model_config = ConfigDict(frozen=True, extra="forbid", alias_generator=to_pascal, populate_by_name=True)

    def wire(self) -> dict[str, Any]:
        """The request's form: the keys it was given, by their wire names (lists as the compiler builds them)."""
        return _lists(self.model_dump(by_alias=True, exclude_unset=True))


class MetricDefinition(Shape):
    name: str
    regex: str


class AlgorithmSpecification(Shape):
    training_image: str | None = None
    training_input_mode: str
    container_entrypoint: tuple[str, ...] | None = None
    container_arguments: tuple[str, ...] | None = None
    metric_definitions: tuple[MetricDefinition, ...] | None = None
    enable_sage_maker_metrics_time_series: bool | None = None


class InstanceGroup(Shape):
    instance_type: str
    instance_count: int
    instance_group_name: str


class ResourceConfig(Shape):
    instance_type: str | None = None
    instance_count: int | None = None
    volume_size_in_gb: int | None = Field(default=None, alias="VolumeSizeInGB")
    volume_kms_key_id: str | None = None
    keep_alive_period_in_seconds: int | None = None
    instance_groups: tuple[InstanceGroup, ...] | None = None


class OutputDataConfig(Shape):
    kms_key_id: str | None = None
    s3_output_path: str
    compression_type: str | None = None


class CheckpointConfig(Shape):
    s3_uri: str
    local_path: str | None = None


class StoppingCondition(Shape):
    max_runtime_in_seconds: int | None = None
    max_wait_time_in_seconds: int | None = None


class RetryStrategy(Shape):
    maximum_retry_attempts: int


class VpcConfig(Shape):
    security_group_ids: tuple[str, ...]
    subnets: tuple[str, ...]


class ShuffleConfig(Shape):
    seed: int


class S3DataSource(Shape):
    s3_data_type: str
    s3_uri: str
    s3_data_distribution_type: str | None = None
    attribute_names: tuple[str, ...] | None = None
    instance_group_names: tuple[str, ...] | None = None
    model_access_config: dict[str, Any] | None = None  # structures sagelaunch passes through as given
    hub_access_config: dict[str, Any] | None = None


class DataSource(Shape):
    s3_data_source: S3DataSource | None = None


class Channel(Shape):
    channel_name: str
    data_source: DataSource
    content_type: str | None = None
    compression_type: str | None = None
    record_wrapper_type: str | None = None
    input_mode: str | None = None
    shuffle_config: ShuffleConfig | None = None
    target_attribute_name: str | None = None  # v2's TrainingInput sends it; botocore's Channel lacks it (see below)


class Tag(Shape):
    key: str
    value: str


class ProfilerConfig(Shape):
    s3_output_path: str | None = None
    profiling_interval_in_milliseconds: int | None = None
    profiling_parameters: dict[str, str] | None = None
    disable_profiler: bool | None = None


class ProfilerRuleConfiguration(Shape):
    rule_configuration_name: str
    local_path: str | None = None
    s3_output_path: str | None = None
    rule_evaluator_image: str
    instance_type: str | None = None
    volume_size_in_gb: int | None = Field(default=None, alias="VolumeSizeInGB")
    rule_parameters: dict[str, str] | None = None


class DebugRuleConfiguration(ProfilerRuleConfiguration):
    """The same members as a profiler rule (botocore: DebugRuleConfiguration)."""


class CollectionConfiguration(Shape):
    collection_name: str | None = None
    collection_parameters: dict[str, str] | None = None


class DebugHookConfig(Shape):
    local_path: str | None = None
    s3_output_path: str
    hook_parameters: dict[str, str] | None = None
    collection_configurations: tuple[CollectionConfiguration, ...] | None = None


class TensorBoardOutputConfig(Shape):
    local_path: str | None = None
    s3_output_path: str


class TrainingJobRequest(Shape):
    """CreateTrainingJobRequest, the members sagelaunch sends."""

    training_job_name: str
    hyper_parameters: dict[str, str] | None = None
    algorithm_specification: AlgorithmSpecification | None = None
    role_arn: str
    input_data_config: tuple[Channel, ...] | None = None
    output_data_config: OutputDataConfig
    resource_config: ResourceConfig | None = None
    vpc_config: VpcConfig | None = None
    stopping_condition: StoppingCondition | None = None
    tags: tuple[Tag, ...] | None = None
    enable_network_isolation: bool | None = None
    enable_inter_container_traffic_encryption: bool | None = None
    enable_managed_spot_training: bool | None = None
    checkpoint_config: CheckpointConfig | None = None
    debug_hook_config: DebugHookConfig | None = None
    debug_rule_configurations: tuple[DebugRuleConfiguration, ...] | None = None
    tensor_board_output_config: TensorBoardOutputConfig | None = None
    profiler_config: ProfilerConfig | None = None
    profiler_rule_configurations: tuple[ProfilerRuleConfiguration, ...] | None = None
    environment: dict[str, str] | None = None
    retry_strategy: RetryStrategy | None = None

    @classmethod
    def of(cls, wire: dict[str, Any]) -> TrainingJobRequest:
        return cls.model_validate(wire)


def _lists(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _lists(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_lists(v) for v in value]
    return value
