"""SageMaker Debugger's hook, rules and TensorBoard output, with the SDK v2's names, order and requests.

`DebuggerHookConfig(s3_output_path=None, container_local_output_path=None, hook_parameters=None,
collection_configs=None)`, `CollectionConfig(name, parameters=None)`, `TensorBoardOutputConfig(s3_output_path,
container_local_output_path=None)`, `Rule.sagemaker(rule_configs.loss_not_decreasing(), ...)`,
`Rule.custom(...)`, `ProfilerRule.sagemaker(rule_configs.ProfilerReport(), ...)`, `ProfilerRule.custom(...)`.
`to_settings(region)` gives the job spec's resolved form (the built-in rules' evaluator image is the region's).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, field_validator

from sagelaunch.jobspec.catalog import detailed_profiler_image_uri, profiler_facts, rule_evaluator_image_uri
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.spec import DebugCollection, DebugHookSettings, DebugRuleSettings, TensorBoardSettings
from sagelaunch.jobspec.s3uri import check_s3_uri
from sagelaunch.profiler_config.v2_args import V2Args

DEFAULT_RULE_EVALUATOR_IMAGE = "DEFAULT_RULE_EVALUATOR_IMAGE"  # v2's marker: the region's evaluator image
DETAILED_PROFILER_RULE = "DetailedProfilerProcessingJobConfig"


def _s3_or_none(field: str, v: str | None) -> str | None:
    return None if v is None else check_s3_uri(field, v)


class CollectionConfig(V2Args):
    POSITIONAL: ClassVar[tuple[str, ...]] = ("name", "parameters")

    name: str = Field(min_length=1)
    parameters: dict[str, str] | None = None

    def key(self) -> tuple[str, tuple[tuple[str, str], ...]]:
        """Equal collections have equal keys (v2 deduplicates them in a set)."""
        return self.name, tuple(sorted((self.parameters or {}).items()))

    def to_settings(self) -> DebugCollection:
        return DebugCollection(name=self.name, parameters=self.parameters)


class DebuggerHookConfig(V2Args):
    POSITIONAL: ClassVar[tuple[str, ...]] = ("s3_output_path", "container_local_output_path", "hook_parameters",
                                             "collection_configs")

    s3_output_path: str | None = None  # None: the job's output path
    container_local_output_path: str | None = None
    hook_parameters: dict[str, str] | None = None
    collection_configs: list[CollectionConfig] | None = None

    _s3 = field_validator("s3_output_path")(classmethod(lambda cls, v: _s3_or_none("s3_output_path", v)))


class TensorBoardOutputConfig(V2Args):
    POSITIONAL: ClassVar[tuple[str, ...]] = ("s3_output_path", "container_local_output_path")

    s3_output_path: str
    container_local_output_path: str | None = None

    _s3 = field_validator("s3_output_path")(classmethod(lambda cls, v: check_s3_uri("s3_output_path", v)))

    def to_settings(self) -> TensorBoardSettings:
        return TensorBoardSettings(s3_output_path=self.s3_output_path, local_path=self.container_local_output_path)


def _no_actions(actions: Any) -> None:
    if actions is not None:
        fix = "drop actions= and act on the rule's status (DescribeTrainingJob DebugRuleEvaluationStatuses)"
        raise SagelaunchError(f"Rule(actions=...): rule actions (StopTraining, Email, SMS) are not supported by "
                              f"sagelaunch; {fix}", field="actions", value=actions, allowed="None", fix=fix)


def _source_params(source: str | None, rule_to_invoke: str | None) -> dict[str, str]:
    if bool(source) != bool(rule_to_invoke):
        raise SagelaunchError("a custom rule's source and rule_to_invoke go together: give both or neither",
                              field="rule_to_invoke" if source else "source", value=None,
                              allowed="source and rule_to_invoke together", fix="give both or neither")
    if source and not source.startswith("s3://"):
        raise SagelaunchError(f"source={source!r}: give the rule's code as an s3:// URI (sagelaunch does not upload "
                              "local rule files); upload it first, e.g. with `aws s3 cp`", field="source", value=source,
                              allowed="an s3:// URI", fix="upload it first, e.g. with `aws s3 cp`")
    return {"source_s3_uri": source, "rule_to_invoke": rule_to_invoke} if source and rule_to_invoke else {}


class _RuleBase(V2Args):
    name: str = Field(min_length=1)
    image_uri: str = DEFAULT_RULE_EVALUATOR_IMAGE
    instance_type: str | None = None
    container_local_output_path: str | None = None
    s3_output_path: str | None = None
    volume_size_in_gb: int | None = Field(None, ge=1)
    rule_parameters: dict[str, Any] | None = None

    def to_settings(self, region: str) -> DebugRuleSettings:
        """The rule as the job sends it: a built-in rule runs on the region's evaluator image (SDK v2's
        _set_default_rule_config: then only the detailed profiler's processing rule keeps an instance type)."""
        image, instance_type, volume = self.image_uri, self.instance_type, self.volume_size_in_gb
        if image == DEFAULT_RULE_EVALUATOR_IMAGE:
            detailed = self.name.startswith(DETAILED_PROFILER_RULE)
            image = detailed_profiler_image_uri(region) if detailed else rule_evaluator_image_uri(region)
            if not detailed:
                instance_type = volume = None
        return DebugRuleSettings(name=self.name, image_uri=image, instance_type=instance_type,
                                 volume_size_in_gb=volume, local_path=self.container_local_output_path,
                                 s3_output_path=self.s3_output_path, parameters=self._request_parameters())

    def _request_parameters(self) -> dict[str, str]:
        return dict(self.rule_parameters or {})


class Rule(_RuleBase):
    """A Debugger rule: evaluates the tensors the hook saves."""

    POSITIONAL: ClassVar[tuple[str, ...]] = (
        "name", "image_uri", "instance_type", "container_local_output_path", "s3_output_path", "volume_size_in_gb",
        "rule_parameters", "collections_to_save", "actions")

    collections_to_save: list[CollectionConfig] = Field(default_factory=list)
    actions: Any = None

    _actions = field_validator("actions")(classmethod(lambda cls, v: _no_actions(v)))

    @property
    def collection_configs(self) -> list[CollectionConfig]:
        return self.collections_to_save

    @classmethod
    def sagemaker(cls, base_config: dict[str, Any], name: str | None = None, container_local_output_path: str | None = None,
                  s3_output_path: str | None = None, other_trials_s3_input_paths: list[str] | None = None,
                  rule_parameters: dict[str, Any] | None = None, collections_to_save: list[CollectionConfig] | None = None,
                  actions: Any = None) -> "Rule":
        if not isinstance(base_config, dict) or "DebugRuleConfiguration" not in base_config:
            raise SagelaunchError(f"Rule.sagemaker(base_config={base_config!r}): give a built-in rule's configuration, "
                                  "e.g. rule_configs.loss_not_decreasing()", field="base_config", value=base_config,
                                  allowed="a built-in rule's configuration", fix="e.g. rule_configs.loss_not_decreasing()")
        if rule_parameters and rule_parameters.get("rule_to_invoke") is not None:
            raise SagelaunchError("Rule.sagemaker(rule_parameters={'rule_to_invoke': ...}): a built-in rule's "
                                  "rule_to_invoke is fixed; use Rule.custom(...) to run your own rule",
                                  field="rule_parameters.rule_to_invoke", value=rule_parameters["rule_to_invoke"],
                                  allowed="the built-in rule's own", fix="use Rule.custom(...) to run your own rule")
        params: dict[str, Any] = {f"other_trial_{i}": path for i, path in enumerate(other_trials_s3_input_paths or ())}
        params.update(base_config["DebugRuleConfiguration"].get("RuleParameters", {}))
        params.update(rule_parameters or {})
        collections = [CollectionConfig(name=c.get("CollectionName"), parameters=c.get("CollectionParameters") or {})
                       for c in base_config.get("CollectionConfigurations", [])]
        return cls(name=name or base_config["DebugRuleConfiguration"].get("RuleConfigurationName"),
                   container_local_output_path=container_local_output_path, s3_output_path=s3_output_path,
                   rule_parameters=params, collections_to_save=collections_to_save or collections, actions=actions)

    @classmethod
    def custom(cls, name: str, image_uri: str, instance_type: str, volume_size_in_gb: int, source: str | None = None,
               rule_to_invoke: str | None = None, container_local_output_path: str | None = None,
               s3_output_path: str | None = None, other_trials_s3_input_paths: list[str] | None = None,
               rule_parameters: dict[str, Any] | None = None, collections_to_save: list[CollectionConfig] | None = None,
               actions: Any = None) -> "Rule":
        params: dict[str, Any] = {f"other_trial_{i}": path for i, path in enumerate(other_trials_s3_input_paths or ())}
        params.update(_source_params(source, rule_to_invoke))
        params.update(rule_parameters or {})
        return cls(name=name, image_uri=image_uri, instance_type=instance_type, volume_size_in_gb=volume_size_in_gb,
                   container_local_output_path=container_local_output_path, s3_output_path=s3_output_path,
                   rule_parameters=params, collections_to_save=collections_to_save or [], actions=actions)


class ProfilerRule(_RuleBase):
    """A profiler rule: evaluates the system and framework metrics the profiler records."""

    POSITIONAL: ClassVar[tuple[str, ...]] = (
        "name", "image_uri", "instance_type", "container_local_output_path", "s3_output_path", "volume_size_in_gb",
        "rule_parameters")

    @classmethod
    def sagemaker(cls, base_config: Any, name: str | None = None, container_local_output_path: str | None = None,
                  s3_output_path: str | None = None, instance_type: str | None = None,
                  volume_size_in_gb: int | None = None) -> "ProfilerRule":
        if not hasattr(base_config, "rule_name") or not hasattr(base_config, "rule_parameters"):
            raise SagelaunchError(f"ProfilerRule.sagemaker(base_config={base_config!r}): give a profiler rule, "
                                  "e.g. rule_configs.ProfilerReport()", field="base_config", value=base_config,
                                  allowed="a profiler rule", fix="e.g. rule_configs.ProfilerReport()")
        used = name or base_config.rule_name
        if used.startswith(DETAILED_PROFILER_RULE):
            facts = profiler_facts()["detailed_profiler_processing"]
            instance_type = instance_type or facts["instance_type"]
            volume_size_in_gb = volume_size_in_gb or facts["volume_size_gb"]
        return cls(name=used, instance_type=instance_type, container_local_output_path=container_local_output_path,
                   s3_output_path=s3_output_path, volume_size_in_gb=volume_size_in_gb,
                   rule_parameters=dict(base_config.rule_parameters))

    @classmethod
    def custom(cls, name: str, image_uri: str, instance_type: str, volume_size_in_gb: int, source: str | None = None,
               rule_to_invoke: str | None = None, container_local_output_path: str | None = None,
               s3_output_path: str | None = None, rule_parameters: dict[str, Any] | None = None) -> "ProfilerRule":
        params = {**_source_params(source, rule_to_invoke), **(rule_parameters or {})}
        return cls(name=name, image_uri=image_uri, instance_type=instance_type, volume_size_in_gb=volume_size_in_gb,
                   container_local_output_path=container_local_output_path, s3_output_path=s3_output_path,
                   rule_parameters=params)

    def _request_parameters(self) -> dict[str, str]:
        return {k: str(v) for k, v in (self.rule_parameters or {}).items()}  # v2 sends every value as text


def detailed_profiler_rule(name: str) -> ProfilerRule:
    """The processing rule that turns SageMaker Profiler's detailed capture into its report (v2 adds it itself)."""
    facts = profiler_facts()["detailed_profiler_processing"]
    return ProfilerRule(name=name, instance_type=facts["instance_type"], volume_size_in_gb=facts["volume_size_gb"],
                        rule_parameters={"rule_to_invoke": "DetailedProfilerProcessing"})


def hook_settings(hook: DebuggerHookConfig | None, collections: list[CollectionConfig]) -> DebugHookSettings:
    """The job's hook: the user's (or the default) with every collection the rules and the hook ask for, once."""
    seen: dict[Any, CollectionConfig] = {}
    for c in collections:
        seen.setdefault(c.key(), c)
    return DebugHookSettings(
        s3_output_path=hook.s3_output_path if hook else None,
        local_path=hook.container_local_output_path if hook else None,
        hook_parameters=hook.hook_parameters if hook else None,
        collections=tuple(c.to_settings() for c in seen.values()),
    )
