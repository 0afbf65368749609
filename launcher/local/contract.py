"""The SageMaker training container contract, for one host of a local job.

On SageMaker each host sees /opt/ml: input/config/*.json, input/data/<channel>/, code/,
model/, output/{data,failure}, checkpoints/, and the SM_* variables the
sagemaker-training-toolkit derives from those files (its ENVIRONMENT_VARIABLES.md and
`Environment.to_env_vars`). Locally each host gets the same tree under the job folder and the
same variables, with the same encodings: JSON for non-strings, `--key value` user arguments.
Pure functions: no processes, no network.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import warnings
from typing import TYPE_CHECKING, Any

from sagelaunch.jobspec.contract import (PROFILER_CONFIG_FILE, SAGELAUNCH_PROFILER_CONFIG,
                              SAGELAUNCH_SMP_CHECKPOINT_NAMES, SAGELAUNCH_SMP_INIT_DIR,
                              SM_PROFILER_OUTPUT_DIR)
from sagelaunch.jobspec.profiling import profiler_config_file
from sagelaunch.jobspec.smp import checkpoint_names
from sagelaunch.launcher.common.safe_write import write_private_text
from sagelaunch.launcher.local.host_layout import HostLayout
from sagelaunch.jobspec.errors import SagelaunchError

if TYPE_CHECKING:
    from sagelaunch.launcher.local.local_job import LocalJob

# Hyperparameters the toolkit keeps for itself (params.SAGEMAKER_HYPERPARAMETERS); other
# `sagemaker_*` keys become SM_FRAMEWORK_PARAMS.
SAGEMAKER_HYPERPARAMETERS = (
    "sagemaker_program",
    "sagemaker_submit_directory",
    "sagemaker_enable_cloudwatch_metrics",
    "sagemaker_region",
    "sagemaker_container_log_level",
    "sagemaker_job_name",
    "default_user_module_name",
    "_tuning_objective_metric",
    "sagemaker_s3_output",
)
SAGEMAKER_PREFIX = "sagemaker_"
FRAMEWORK_MODULES = {
    "pytorch": "sagemaker_pytorch_container.training:main",
    "tensorflow": "sagemaker_tensorflow_container.training:main",
}
INSTANCE_GROUP = "homogeneousCluster"
# The loopback interface: every local "host" talks over 127.0.0.1.
NETWORK_INTERFACE = "lo"


def host_names(instance_count: int) -> list[str]:
    return [f"algo-{i + 1}" for i in range(instance_count)]


def decode_hyperparameters(encoded: dict[str, str]) -> dict[str, Any]:
    """The toolkit's read_hyperparameters: json.loads each value, keep it raw when that fails."""
    decoded = {}
    for key, value in encoded.items():
        try:
            decoded[key] = json.loads(value)
        except (TypeError, ValueError):
            decoded[key] = value
    return decoded


def split_hyperparameters(all_hps: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(user hyperparameters, sagemaker_* reserved ones, additional framework parameters)."""
    reserved = {k: v for k, v in all_hps.items() if k in SAGEMAKER_HYPERPARAMETERS or k.startswith(SAGEMAKER_PREFIX)}
    user = {k: v for k, v in all_hps.items() if k not in reserved}
    framework = {k: v for k, v in reserved.items() if k not in SAGEMAKER_HYPERPARAMETERS}
    return user, reserved, framework


def user_args(hyperparameters: dict[str, Any]) -> list[str]:
    """`--key value` per hyperparameter, sorted (the toolkit's mapping.to_cmd_args)."""
    args: list[str] = []
    for key in sorted(hyperparameters):
        value = hyperparameters[key]
        args.append(f"--{key}" if len(str(key)) > 1 else f"-{key}")
        if hasattr(value, "items"):
            args.append(",".join(f"{k}={v}" for k, v in sorted(value.items())))
        else:
            args.append("" if value is None else str(value))
    return args


# What /bin/sh would run, redirect, substitute or cut as a comment (the toolkit hands it the joined command line)
_SHELL_ACTIONS = re.compile(r"[;&|<>`$()\n]|(^|\s)#")


def command_line_args(hyperparameters: dict[str, Any]) -> list[str]:
    """The script's arguments as SageMaker's training toolkit gives them: to_cmd_args joined with spaces and run
    through /bin/sh (process.run_async → create_subprocess_shell). So an empty value disappears — {"do_train": ""} is
    a bare `--do_train` — and a value with spaces is several words. The split is the shell's word splitting and quote
    removal (shlex), never its expansions: a value the shell would run, redirect or cut is refused by name."""
    words = user_args(hyperparameters)
    for name, value in zip(words[::2], words[1::2]):
        for text in (name, value):
            action = _SHELL_ACTIONS.search(text)
            if action:
                raise SagelaunchError(
                    f"hyperparameter {name.lstrip('-')}={value!r}: SageMaker's training toolkit passes hyperparameters "
                    f"to the script through /bin/sh, which would act on {action.group().strip()!r} instead of passing "
                    "it; remove it from the value (or pass such text in a file of a channel)",
                    field=f"hyperparameters.{name.lstrip('-')}", value=value,
                    allowed="text without shell redirections, pipes or substitutions",
                    fix="remove it from the value (or pass such text in a file of a channel)")
            try:
                shlex.split(text)
            except ValueError as exc:  # the shell fails the same way: "Unterminated quoted string"
                raise SagelaunchError(f"hyperparameter {name.lstrip('-')}={value!r}: the command line the toolkit runs "
                                      f"through /bin/sh would have an unclosed quote ({exc}); balance or remove the "
                                      "quote", field=f"hyperparameters.{name.lstrip('-')}", value=value,
                                      allowed="balanced quotes", fix="balance or remove the quote") from exc
        if len(shlex.split(value)) > 1:  # as on SageMaker (sagemaker-training-toolkit#128), but never silently
            warnings.warn(f"hyperparameter {name.lstrip('-')}={value!r} reaches the script as "
                          f"{len(shlex.split(value))} separate arguments: SageMaker's training toolkit runs the command "
                          "through /bin/sh, which splits it at spaces; quote it inside the value "
                          f"({shlex.quote(value)!r}) to pass it whole", HyperparameterSplitWarning, stacklevel=2)
    return shlex.split(" ".join(words))


class HyperparameterSplitWarning(UserWarning):
    """A hyperparameter value the training toolkit's shell splits into several arguments (as SageMaker does)."""


def resource_config(current_host: str, hosts: list[str], instance_type: str) -> dict[str, Any]:
    return {
        "current_host": current_host,
        "current_instance_type": instance_type,
        "current_group_name": INSTANCE_GROUP,
        "hosts": list(hosts),
        "instance_groups": [{"instance_group_name": INSTANCE_GROUP, "instance_type": instance_type, "hosts": list(hosts)}],
        "network_interface_name": NETWORK_INTERFACE,
    }


def input_data_config(job: "LocalJob") -> dict[str, dict[str, str]]:
    """inputdataconfig.json, as SageMaker writes it from the request's InputDataConfig."""
    config = {}
    for channel in job.channels:
        source = channel.data_source.s3_data_source  # a local folder is sent as its S3Uri
        entry = {
            "TrainingInputMode": channel.input_mode or job.input_mode,
            "S3DistributionType": (source.s3_data_distribution_type if source else None) or "FullyReplicated",
            "RecordWrapperType": channel.record_wrapper_type or "None",
        }
        if channel.content_type:
            entry["ContentType"] = channel.content_type
        config[channel.channel_name] = entry
    return config


def write_config_files(layout: HostLayout, job: "LocalJob", current_host: str, hosts: list[str],
                       hyperparameters: dict[str, str]) -> None:
    """input/config/{hyperparameters,resourceconfig,inputdataconfig}.json (+ profilerconfig.json)."""
    files = {
        "hyperparameters.json": hyperparameters,
        "resourceconfig.json": resource_config(current_host, hosts, job.instance_type),
        "inputdataconfig.json": input_data_config(job),
    }
    if job.profiler_config is not None:
        files[PROFILER_CONFIG_FILE] = profiler_config_file(job.profiler_config.wire())
    layout.config_dir.mkdir(parents=True, exist_ok=True)
    for name, content in files.items():
        write_private_text(layout.config_dir / name, json.dumps(content, indent=2, sort_keys=True))


def _env_value(value: Any) -> str:
    """The toolkit's mapping.to_env_vars encoding: strings raw, None empty, the rest compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def training_env(layout: HostLayout, job: "LocalJob", current_host: str, hosts: list[str],
                 hyperparameters: dict[str, str], num_gpus: int, num_cpus: int) -> dict[str, Any]:
    """SM_TRAINING_ENV: everything the toolkit's Environment knows about this host."""
    user_hps, reserved, framework = split_hyperparameters(decode_hyperparameters(hyperparameters))
    resources = resource_config(current_host, hosts, job.instance_type)
    entry_point = reserved["sagemaker_program"]
    group = {"instance_group_name": INSTANCE_GROUP, "instance_type": job.instance_type, "hosts": list(hosts)}
    distributed = job.facts.distributed
    return {
        "additional_framework_parameters": framework,
        "channel_input_dirs": {c.channel_name: str(layout.channel_dir(c.channel_name)) for c in job.channels},
        "current_host": current_host,
        "current_instance_group": INSTANCE_GROUP,
        "current_instance_group_hosts": list(hosts),
        "current_instance_type": job.instance_type,
        "distribution_hosts": list(hosts) if distributed else [],
        "distribution_instance_groups": [INSTANCE_GROUP] if distributed else [],
        "framework_module": FRAMEWORK_MODULES[job.facts.framework],
        "hosts": list(hosts),
        "hyperparameters": user_hps,
        "input_config_dir": str(layout.config_dir),
        "input_data_config": input_data_config(job),
        "input_dir": str(layout.input_dir),
        "instance_groups": [INSTANCE_GROUP],
        "instance_groups_dict": {INSTANCE_GROUP: group},
        "is_hetero": False,
        "is_master": current_host == hosts[0],
        "is_modelparallel_enabled": True if "mp_parameters" in user_hps else None,
        "job_name": reserved["sagemaker_job_name"],
        "log_level": reserved["sagemaker_container_log_level"],
        "master_hostname": hosts[0],
        "model_dir": str(layout.model_dir),
        "module_dir": str(reserved.get("sagemaker_submit_directory", layout.code_dir)),
        "module_name": entry_point[:-3] if entry_point.endswith(".py") else entry_point,
        "network_interface_name": NETWORK_INTERFACE,
        "num_cpus": num_cpus,
        "num_gpus": num_gpus,
        "num_neurons": 0,
        "output_data_dir": str(layout.output_data_dir),
        "output_dir": str(layout.output_dir),
        "output_intermediate_dir": str(layout.intermediate_dir),
        "resource_config": resources,
        "user_entry_point": entry_point,
    }


def environment(layout: HostLayout, job: "LocalJob", current_host: str, hosts: list[str],
                hyperparameters: dict[str, str], num_gpus: int, num_cpus: int) -> dict[str, str]:
    """The SM_* variables of one host (the toolkit's Environment.to_env_vars) plus the local extras."""
    env_info = training_env(layout, job, current_host, hosts, hyperparameters, num_gpus, num_cpus)
    user_hps = env_info["hyperparameters"]
    values: dict[str, Any] = {
        "hosts": env_info["hosts"],
        "network_interface_name": env_info["network_interface_name"],
        "hps": user_hps,
        "user_entry_point": env_info["user_entry_point"],
        "framework_params": env_info["additional_framework_parameters"],
        "resource_config": env_info["resource_config"],
        "input_data_config": env_info["input_data_config"],
        "output_data_dir": env_info["output_data_dir"],
        "channels": sorted(env_info["channel_input_dirs"]),
        "current_host": current_host,
        "current_instance_type": env_info["current_instance_type"],
        "current_instance_group": env_info["current_instance_group"],
        "current_instance_group_hosts": env_info["current_instance_group_hosts"],
        "instance_groups": env_info["instance_groups"],
        "instance_groups_dict": env_info["instance_groups_dict"],
        "distribution_instance_groups": env_info["distribution_instance_groups"],
        "is_hetero": env_info["is_hetero"],
        "module_name": env_info["module_name"],
        "log_level": env_info["log_level"],
        "framework_module": env_info["framework_module"],
        "input_dir": env_info["input_dir"],
        "input_config_dir": env_info["input_config_dir"],
        "output_dir": env_info["output_dir"],
        "num_cpus": num_cpus,
        "num_gpus": num_gpus,
        "num_neurons": 0,
        "model_dir": env_info["model_dir"],
        "module_dir": env_info["module_dir"],
        "training_env": env_info,
        "user_args": user_args(user_hps),
        "output_intermediate_dir": env_info["output_intermediate_dir"],
    }
    for name, path in env_info["channel_input_dirs"].items():
        values[f"channel_{name}"] = path
    for key, value in user_hps.items():
        values[f"hp_{key}"] = value
    env = {f"SM_{str(key).upper()}": _env_value(value) for key, value in values.items()}  # SM_HP_MP_PARAMETERS too
    if "mp_parameters" in user_hps:
        env[SAGELAUNCH_SMP_INIT_DIR] = str(layout.root / "smp_init")  # the supervisor checks smp.init ran
        env[SAGELAUNCH_SMP_CHECKPOINT_NAMES] = checkpoint_names(job.facts.framework_version)
    env[SM_PROFILER_OUTPUT_DIR] = str(layout.profiler_dir)
    if job.profiler_config is not None:
        env[SAGELAUNCH_PROFILER_CONFIG] = str(layout.profiler_config_file)
    # Outside /opt/ml the toolkit (and scripts that follow it) find the tree here.
    env["SAGEMAKER_BASE_DIR"] = str(layout.root)
    env["TRAINING_JOB_NAME"] = job.name
    env["SAGEMAKER_REGION"] = job.facts.region
    return env


def tf_config(hosts: list[str], current_host: str, ports: list[int]) -> str:
    """TF_CONFIG for MultiWorkerMirroredStrategy: every host a worker, on 127.0.0.1."""
    cluster = {"worker": [f"127.0.0.1:{port}" for port in ports]}
    return json.dumps({"cluster": cluster, "task": {"type": "worker", "index": hosts.index(current_host)}})


def num_cpus() -> int:
    return os.cpu_count() or 1
