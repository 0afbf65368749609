"""An estimator's arguments → the frozen TrainingJobSpec, one builder per part (each part is one request shape)."""

from __future__ import annotations

import os
from typing import Any, Literal, cast

from sagelaunch.estimators.arguments import EstimatorArguments
from sagelaunch.estimators.code_files import entry_in_source_dir
from sagelaunch.estimators.debugger import debugger_spec_fields
from sagelaunch.estimators.resolve import Resolved
from sagelaunch.jobspec.instance_types import is_local
from sagelaunch.jobspec.spec import (
    CodeSpec,
    ComputeSpec,
    NetworkSpec,
    ObservabilitySpec,
    OutputSpec,
    StoppingSpec,
    TrainingJobSpec,
)

Framework = Literal["pytorch", "tensorflow", "generic"]  # TrainingJobSpec.framework's values


def training_job_spec(args: EstimatorArguments, r: Resolved, name: str, settings: dict[str, Any], code: CodeSpec,
                      output_path: str | None) -> TrainingJobSpec:
    """The spec of a job named `name`; `settings` are settings.job_settings', `code` the code part, `output_path`
    the user's (None where the last local job set it)."""
    local = is_local(r.instance_type)
    return TrainingJobSpec(
        job_name=name, framework=cast(Framework, args.framework),  # each estimator class names one
        framework_version=r.framework_version, py_version=r.py_version,
        image_uri=r.image_uri, region=r.region, role=args.role,
        tags=tuple((t["Key"], t["Value"]) for t in args.tags or ()),
        code=code, compute=compute_part(args, r, settings), inputs=settings["inputs"],
        stopping=StoppingSpec(max_run=args.max_run, max_wait=args.max_wait,
                              use_spot_instances=args.use_spot_instances,
                              max_retry_attempts=settings["max_retry_attempts"]),
        output=OutputSpec(output_path=output_path, output_kms_key=args.output_kms_key,
                          checkpoint_s3_uri=args.checkpoint_s3_uri,
                          checkpoint_local_path=args.checkpoint_local_path,
                          disable_output_compression=settings["disable_output_compression"]),
        network=NetworkSpec(
            subnets=tuple(args.subnets) if args.subnets is not None else None,
            security_group_ids=tuple(args.security_group_ids) if args.security_group_ids is not None else None,
            enable_network_isolation=args.enable_network_isolation,
            encrypt_inter_container_traffic=args.encrypt_inter_container_traffic),
        observability=ObservabilitySpec(profiler=r.profiler,
                                        **debugger_spec_fields(args, r.profiler, r.region, local, r.plan.strategy)),
    )


def code_part(args: EstimatorArguments, r: Resolved, settings: dict[str, Any], code: tuple[str, str | None, list[str]],
              framework_fields: dict[str, Any]) -> CodeSpec:
    """What runs and what it is told (AlgorithmSpecification, HyperParameters, Environment); `code` is
    (entry_point, source_dir, dependencies) as given or inside fit()'s clone of git_config."""
    entry_point, given_source_dir, dependencies = code
    if given_source_dir is None:
        entry, source_dir, entry_path = os.path.basename(entry_point), None, os.path.abspath(entry_point)
    else:
        entry, entry_path = entry_in_source_dir(entry_point, given_source_dir), None
        source_dir = given_source_dir if given_source_dir.startswith("s3://") else os.path.abspath(given_source_dir)
    return CodeSpec(
        entry_point=entry, source_dir=source_dir, entry_point_path=entry_path,
        ignore_patterns=tuple(args.ignore_patterns or ()),
        dependencies=tuple(os.path.abspath(d) for d in dependencies),
        code_location=settings["code_location"], hyperparameters=dict(args.user_hyperparameters or {}),
        environment=dict(args.environment or {}), container_log_level=args.container_log_level,
        distribution=r.plan.distribution, input_mode=settings["input_mode"],
        metric_definitions=settings["metric_definitions"],
        enable_sagemaker_metrics=settings["enable_sagemaker_metrics"],
        container_entry_point=settings["container_entry_point"],
        container_arguments=settings["container_arguments"],
        **framework_fields,
    )


def compute_part(args: EstimatorArguments, r: Resolved, settings: dict[str, Any]) -> ComputeSpec:
    """Where it runs (ResourceConfig) and how many processes each host starts."""
    count = sum(g.instance_count for g in args.instance_groups) if args.instance_groups else args.instance_count
    return ComputeSpec(instance_type=r.instance_type, instance_count=count, gpus_per_host=r.gpus_per_host,
                       processes_per_host=r.plan.processes_per_host, volume_size=args.volume_size,
                       volume_kms_key=args.volume_kms_key,
                       keep_alive_period_in_seconds=settings["keep_alive_period_in_seconds"],
                       instance_groups=settings["instance_groups"])
