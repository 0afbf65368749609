"""What a job sends for SageMaker Debugger and the profiler, decided as SageMaker SDK v2 2.257 decides it.

Without `profiler_config` a SageMaker job gets Debugger's default monitoring (ProfilerConfig with the job's
output path) and the default hook (DebugHookConfig, no collections); `disable_profiler=True` and
`debugger_hook_config=False` take them out. Monitoring is off where Debugger does not run it (a few regions,
trn* instances); the hook is off in regions without Debugger, for jobs that checkpoint to S3 and a local path
(SMDebug cannot) and for TensorFlow's parameter server. A local job runs sagelaunch's own profiler only when
asked (`profiler_config`), as before; Debugger's hook and rules are SageMaker's and not run locally.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from sagelaunch.jobspec import catalog as support
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.names import job_name
from sagelaunch.jobspec.spec import ProfilerSettings
from sagelaunch.profiler_config.debugger import (
    DEFAULT_RULE_EVALUATOR_IMAGE,
    DETAILED_PROFILER_RULE,
    DebuggerHookConfig,
    ProfilerRule,
    Rule,
    detailed_profiler_rule,
    hook_settings,
)

if TYPE_CHECKING:
    from sagelaunch.estimators.arguments import EstimatorArguments


def split_rules(est: EstimatorArguments) -> tuple[list[Rule], list[ProfilerRule]]:
    rules = list(est.rules or ())
    return [r for r in rules if isinstance(r, Rule)], [r for r in rules if isinstance(r, ProfilerRule)]


def profiler_settings(est: EstimatorArguments, version: str, region: str, local: bool,
                      instance_type: str) -> ProfilerSettings | None:
    """The job's ProfilerSettings (None: no profiler), or a ValueError naming the field; `instance_type` is the
    training instance type (the first group's with instance_groups)."""
    config = est.profiler_config
    if config is not None and est.disable_profiler and not config.disable_profiler:
        raise SagelaunchError("profiler_config is set while disable_profiler=True; drop one of them "
                              "(or pass ProfilerConfig(disable_profiler=True))", field="profiler_config", value=config,
                              allowed="None with disable_profiler=True",
                              fix="drop one of them (or pass ProfilerConfig(disable_profiler=True))")
    if config is not None and config.framework_profile_params is not None:
        support.check_framework_profiling(est.framework, version)
    _, profiler_rules = split_rules(est)
    if local:
        if est.disable_profiler:
            return ProfilerSettings(disable_profiler=True)
        return config.to_settings() if config is not None else None
    monitoring = support.monitoring_available(region, instance_type)
    if est.disable_profiler or not monitoring or (config is not None and config.disable_profiler):
        if config is not None and not config.disable_profiler:
            raise SagelaunchError(
                f"profiler_config: SageMaker Debugger's profiler does not run in region={region!r} on "
                f"instance_type={instance_type!r} (SDK v2 turns it off there); drop profiler_config",
                field="profiler_config", value=config, allowed="None here", fix="drop profiler_config")
        if profiler_rules:
            raise SagelaunchError("rules: a ProfilerRule needs the profiler, which is off (disable_profiler=True, or "
                                  f"region={region!r}/instance_type={instance_type!r} without Debugger monitoring); "
                                  "drop the ProfilerRule or the reason the profiler is off", field="rules",
                                  value=profiler_rules, allowed="no ProfilerRule while the profiler is off",
                                  fix="drop the ProfilerRule or the reason the profiler is off")
        return config.to_settings() if config is not None else ProfilerSettings(disable_profiler=True)
    if config is None:
        return ProfilerSettings()  # Debugger's default system monitoring
    if config.detailed:
        support.check_profiler_support(est.framework, version, region, instance_type)
    return config.to_settings()


def check_debugger(est: EstimatorArguments, region: str, local: bool) -> None:
    """The debugger arguments' own cross-field rules (raised at construction, as every other check)."""
    debug_rules, _ = split_rules(est)
    if local:
        given = [f for f in ("rules", "tensorboard_output_config") if getattr(est, f)]
        if isinstance(est.debugger_hook_config, DebuggerHookConfig):
            given.append("debugger_hook_config")
        if given:
            warnings.warn(f"{', '.join(given)}: SageMaker Debugger runs on SageMaker only; a local job does not "
                          "save tensors or evaluate rules", UserWarning, stacklevel=6)
        return
    if not support.region_supports_debugger(region):
        hook = est.debugger_hook_config
        if isinstance(hook, DebuggerHookConfig) or hook is True or debug_rules:
            raise SagelaunchError(f"debugger_hook_config/rules: SageMaker Debugger is not available in "
                                  f"region={region!r}; drop them (or set debugger_hook_config=False)",
                                  field="debugger_hook_config", value=hook, allowed="False here",
                                  fix="drop them (or set debugger_hook_config=False)")
    if est.rules:
        builtin = [r for r in est.rules if r.image_uri == DEFAULT_RULE_EVALUATOR_IMAGE
                   and not r.name.startswith(DETAILED_PROFILER_RULE)]
        if builtin:
            support.rule_evaluator_image_uri(region)


def debugger_spec_fields(est: EstimatorArguments, profiler: ProfilerSettings | None, region: str, local: bool,
                         strategy: str) -> dict[str, Any]:
    """The spec's profiler_rules, debug_hook, debug_rules and tensorboard_output for a job submitted now."""
    if local:
        return {}
    debug_rules, profiler_rules = split_rules(est)
    config = est.profiler_config
    rules: list[ProfilerRule] = list(profiler_rules)
    profiling = profiler is not None and not profiler.disable_profiler
    # v2 adds the detailed profiler's processing rule unless the user listed profiler rules (or rules=[])
    if profiling and config is not None and config.detailed and (est.rules is None or (est.rules and not profiler_rules)):
        rules.append(detailed_profiler_rule(job_name(DETAILED_PROFILER_RULE)))
    fields: dict[str, Any] = {"profiler_rules": tuple(r.to_settings(region) for r in rules) if profiling else ()}

    hook = est.debugger_hook_config
    if hook is True:
        hook = None
    on = hook is not False and support.region_supports_debugger(region)
    if on and est.checkpoint_s3_uri and est.checkpoint_local_path:
        on = False  # SMDebug does not support checkpointing jobs (v2 turns the hook off)
    parameter_server = est.framework == "tensorflow" and strategy == "parameter_server"
    if on and not parameter_server:
        user_hook = hook if isinstance(hook, DebuggerHookConfig) else None
        collections = [c for r in debug_rules for c in r.collection_configs]
        collections += list(user_hook.collection_configs or []) if user_hook else []
        fields["debug_hook"] = hook_settings(user_hook, collections)
    if not parameter_server:
        fields["debug_rules"] = tuple(r.to_settings(region) for r in debug_rules)
    if est.tensorboard_output_config is not None:
        fields["tensorboard_output"] = est.tensorboard_output_config.to_settings()
    return fields
