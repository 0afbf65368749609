"""Lay out a local job's folder and write the plan its supervisor runs.

Per host: the /opt/ml tree (contract.HostLayout), the code, the channels, the config files,
the environment and the command — torchrun for PyTorch, the script itself with TF_CONFIG for
TensorFlow. The plan is plain JSON so the supervisor (a separate process) needs no spec.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from launcher import contract, registry
from launcher.archive import unpack
from launcher.local import channels as channel_io
from jobspec.s3uri import parse_s3_uri
from launcher.local import requirements, s3
from launcher.local.artifacts import artifact_prefix
from launcher.local.job_modules import job_module_paths
from launcher.local.mpi_options import exported_environment
from launcher.local.logs import rank_prefix_template
from launcher.local.path_errors import with_path
from launcher.safe_write import write_private_text
from jobspec.spec import TrainingJobSpec

_LAUNCHER_ROOT = Path(__file__).resolve().parents[2]  # the folder holding launcher/, profiler/, modelparallel/


def visible_gpus(instance_type: str, base_env: dict[str, str]) -> list[str]:
    """GPU ids the job may use: none for "local"; those this machine shows for "local_gpu"."""
    from launcher.environment import visible_gpus as machine_gpus

    return machine_gpus(base_env) if instance_type == "local_gpu" else []


def gpu_slices(gpus: list[str], hosts: int) -> list[list[str]]:
    """Each local host's own GPUs, as separate instances have; hosts share them when there are too few."""
    if len(gpus) < hosts or hosts == 1:
        return [list(gpus) for _ in range(hosts)]
    per_host = len(gpus) // hosts
    return [gpus[i * per_host:(i + 1) * per_host] for i in range(hosts)]


def _python_path(code_dir: Path, base_env: dict[str, str], job_module_dirs: list[str],
                 requirement_dirs: list[str]) -> str:
    # the job imports its own code first, then what its requirements.txt installed, then sagelaunch's packages
    # (modelparallel, profiler), then the stand-ins for SageMaker's module names (launcher.local.job_modules)
    parts = [str(code_dir), *requirement_dirs]
    if "site-packages" not in _LAUNCHER_ROOT.parts and "dist-packages" not in _LAUNCHER_ROOT.parts:
        parts.append(str(_LAUNCHER_ROOT))
    parts.extend(job_module_dirs)
    if base_env.get("PYTHONPATH"):
        parts.append(base_env["PYTHONPATH"])
    return ":".join(parts)


def copy_code(spec: TrainingJobSpec, files: list[tuple[Path, str]], code_dirs: list[Path], job_dir: Path) -> None:
    """Each host gets its own copy of the code, as each SageMaker host extracts sourcedir.tar.gz."""
    if spec.source_dir is not None and spec.source_dir.startswith("s3://"):
        archive = job_dir / "sourcedir.tar.gz"
        bucket, key = parse_s3_uri(spec.source_dir)
        s3.client(spec.region).download_file(bucket, key, str(archive))
        for code_dir in code_dirs:
            unpack(archive, code_dir)
        if not (code_dirs[0] / spec.entry_point).is_file():
            raise ValueError(f"entry_point {spec.entry_point!r} is not in source_dir {spec.source_dir!r}")
        return
    for code_dir in code_dirs:
        for path, name in files:
            target = code_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copy2(path, target)
            except OSError as error:  # a full disk fails in sendfile, which names no file
                raise with_path(error, target) from error


def _link_checkpoints(spec: TrainingJobSpec, layout: contract.HostLayout) -> None:
    if spec.checkpoint_local_path:
        # the same folder for every run that names it: resume can be tested
        shared = Path(spec.checkpoint_local_path).expanduser().resolve()
        shared.mkdir(parents=True, exist_ok=True)
        layout.checkpoints_dir.symlink_to(shared, target_is_directory=True)
    else:
        layout.checkpoints_dir.mkdir(parents=True, exist_ok=True)


def checkpoint_folders(layouts: list[contract.HostLayout]) -> list[Path]:
    """Each distinct checkpoint folder once (hosts sharing checkpoint_local_path share one)."""
    seen: dict[Path, None] = {}
    for layout in layouts:
        seen.setdefault(layout.checkpoints_dir.resolve(), None)
    return list(seen)


def _restore_checkpoints(spec: TrainingJobSpec, layouts: list[contract.HostLayout]) -> None:
    """As on SageMaker: what is under checkpoint_s3_uri is in checkpoints/ when the job starts."""
    if not spec.checkpoint_s3_uri:
        return
    keys = s3.list_keys(spec.checkpoint_s3_uri, spec.region)
    for folder in checkpoint_folders(layouts):
        s3.download(spec.checkpoint_s3_uri.rstrip("/") + "/", keys, folder, spec.region)


def _command(spec: TrainingJobSpec, python: str, entry: Path, args: list[str], *, host_index: int, hosts: int,
             master_port: int, log_dir: Path) -> list[str]:
    if spec.framework == "tensorflow":
        return ([python, str(entry)] if entry.suffix == ".py" else [str(entry)]) + args
    command = [
        python, "-m", "torch.distributed.run",
        "--nnodes", str(hosts), "--node-rank", str(host_index),
        "--nproc-per-node", str(spec.processes_per_host),
        # static rendezvous on a c10d TCPStore: node rank i holds global ranks i*P … i*P+P-1
        "--master-addr", "127.0.0.1", "--master-port", str(master_port),
        "--max-restarts", "0", "--log-dir", str(log_dir), "--tee", "3",
    ]
    if entry.suffix != ".py":
        command.append("--no-python")
    return command + [str(entry), *args]


def build(spec: TrainingJobSpec, *, job_dir: Path, files: list[tuple[Path, str]],
          resolved_channels: list[channel_io.ResolvedChannel], python: str, master_port: int,
          tf_ports: list[int], stop_grace: float, base_env: dict[str, str]) -> dict[str, Any]:
    """Create the job folder's contents and return the plan (also written to plan.json)."""
    # the script's arguments (SM_USER_ARGS keeps to_cmd_args' list; the command line is what the toolkit's shell
    # makes of it), checked before anything is laid out, downloaded or installed
    args = contract.command_line_args(contract.split_hyperparameters(
        contract.decode_hyperparameters(contract.job_hyperparameters(spec, "")))[0])
    hosts = contract.host_names(spec.instance_count)
    layouts = {host: contract.HostLayout(job_dir / host) for host in hosts}
    for layout in layouts.values():
        layout.create()
        _link_checkpoints(spec, layout)
    _restore_checkpoints(spec, list(layouts.values()))
    copy_code(spec, files, [l.code_dir for l in layouts.values()], job_dir)
    for resolved in resolved_channels:
        channel_io.materialize(resolved, job_dir, [l.channel_dir(resolved.channel.name) for l in layouts.values()],
                               spec.region)
    requirement_dirs, requirement_notes = requirements.install(layouts[hosts[0]].code_dir, python, registry.home())
    job_module_dirs, job_module_notes = job_module_paths(spec, python)
    mpi_variables, mpi_notes = exported_environment(
        spec.distribution_hyperparameters.get("sagemaker_mpi_custom_mpi_options", ""), {**base_env, **spec.environment})
    gpu_sets, cpus = gpu_slices(visible_gpus(spec.instance_type, base_env), len(hosts)), contract.num_cpus()
    host_plans = []
    for index, host in enumerate(hosts):
        layout = layouts[host]
        submit_dir = spec.submit_directory or str(layout.code_dir)
        hyperparameters = contract.job_hyperparameters(spec, submit_dir)
        contract.write_config_files(layout, spec, host, hosts, hyperparameters)
        env = {**spec.environment, **mpi_variables}
        env.update(contract.environment(layout, spec, host, hosts, hyperparameters, len(gpu_sets[index]), cpus))
        if spec.instance_type == "local_gpu":
            env["CUDA_VISIBLE_DEVICES"] = ",".join(gpu_sets[index])
        env["PYTHONUNBUFFERED"] = "1"  # lines reach the log as they are printed
        env["PYTHONPATH"] = _python_path(layout.code_dir, {**base_env, **spec.environment}, job_module_dirs,
                                         requirement_dirs)
        if spec.framework == "tensorflow":
            env["TF_CONFIG"] = contract.tf_config(hosts, host, tf_ports)
        else:
            env["TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE"] = rank_prefix_template(host)
            # when a rank fails torchrun SIGTERMs its siblings and waits this long before SIGKILL
            # (30 s by default): keep the whole job's teardown within the 10 s we promise
            env.setdefault("TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "3")
            if "OMP_NUM_THREADS" not in {**base_env, **spec.environment}:
                # share this machine's cores between the ranks (torchrun would pick 1 and say so)
                env["OMP_NUM_THREADS"] = str(max(1, cpus // (spec.processes_per_host * spec.instance_count)))
        command = _command(spec, python, layout.code_dir / spec.entry_point, args, host_index=index,
                           hosts=len(hosts), master_port=master_port, log_dir=job_dir / "logs" / "torchrun" / host)
        monitor = None
        if spec.profiler is not None and not spec.profiler.disable_profiler:
            monitor = [python, "-m", "profiler.monitor", "--config", str(layout.profiler_config_file),
                       "--out", str(layout.profiler_dir), "--host", host]
        host_plans.append({
            "host": host, "root": str(layout.root), "cwd": str(layout.code_dir), "command": command, "env": env,
            # TensorFlow runs one process per host: its rank is the host's index
            "rank": index if spec.framework == "tensorflow" else None,
            "rank_base": index * spec.processes_per_host, "monitor": monitor,
        })
    plan = {
        "job_name": spec.job_name, "job_dir": str(job_dir), "framework": spec.framework, "python": python,
        "hosts": host_plans, "max_run": spec.max_run, "stop_grace": stop_grace, "region": spec.region,
        "artifact_prefix": artifact_prefix(spec.output_path, spec.job_name, job_dir),
        "checkpoint_s3_uri": spec.checkpoint_s3_uri,
        "notes": requirement_notes + job_module_notes + mpi_notes,  # written to the job log when it starts
        # what the job writes after this moment goes back to checkpoint_s3_uri (restored files do not)
        "checkpoints_restored_at": time.time(),
    }
    write_private_text(job_dir / "plan.json", json.dumps(plan, indent=2))  # every host's environment
    return plan


def supervisor_env(base_env: dict[str, str]) -> dict[str, str]:
    env = dict(base_env)
    env["PYTHONPATH"] = ":".join(p for p in (str(_LAUNCHER_ROOT), base_env.get("PYTHONPATH", "")) if p)
    return env
