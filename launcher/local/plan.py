"""Lay out a local job's folder and write the plan its supervisor runs.

Per host: the /opt/ml tree (host_layout.HostLayout), the code, the channels, the config files,
the environment and the command — torchrun for a distributed PyTorch job, the script itself otherwise (one process per
host, as SageMaker's toolkits start it: with MASTER_ADDR/MASTER_PORT for PyTorch, TF_CONFIG for TensorFlow).
Everything comes from the job's compiled request and its local facts (launcher.local.local_job); the plan is a typed,
versioned record (launcher.local.plan_model) so the supervisor (a separate process) needs neither.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.install import INSTALL_ROOT
from sagelaunch.jobspec.instance_types import instance_type as instance_type_record
from sagelaunch.jobspec.s3uri import parse_s3_uri
from sagelaunch.launcher.common.archive import unpack
from sagelaunch.launcher.common.environment import machine_gpus
from sagelaunch.launcher.common.safe_write import write_private_text
from sagelaunch.launcher.local.host_layout import HostLayout
from sagelaunch.launcher.local import channels as channel_io
from sagelaunch.launcher.local import contract, registry, requirements, s3
from sagelaunch.launcher.local.job_modules import job_module_paths
from sagelaunch.launcher.local.local_job import LocalJob
from sagelaunch.launcher.local.logs import rank_prefix_template
from sagelaunch.launcher.local.mpi_options import exported_environment
from sagelaunch.launcher.local.path_errors import with_path
from sagelaunch.launcher.local.plan_model import PLAN_FILE, HostPlan, JobPlan


def visible_gpus(instance_type: str, base_env: dict[str, str]) -> list[str]:
    """GPU ids the job may use: those this machine shows for a type that takes them ("local_gpu"), else none."""
    return list(machine_gpus(base_env)) if instance_type_record(instance_type).gpus_from_machine else []


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
    if "site-packages" not in INSTALL_ROOT.parts and "dist-packages" not in INSTALL_ROOT.parts:
        parts.append(str(INSTALL_ROOT))
    parts.extend(job_module_dirs)
    if base_env.get("PYTHONPATH"):
        parts.append(base_env["PYTHONPATH"])
    return ":".join(parts)


def copy_code(job: LocalJob, code_dirs: list[Path]) -> None:
    """Each host gets its own copy of the code, as each SageMaker host extracts sourcedir.tar.gz."""
    facts = job.facts
    if facts.code_archive is not None:
        archive = facts.job_dir / "sourcedir.tar.gz"
        bucket, key = parse_s3_uri(facts.code_archive)
        s3.client(facts.region).download_file(bucket, key, str(archive))
        for code_dir in code_dirs:
            unpack(archive, code_dir)
        if not (code_dirs[0] / job.entry_point).is_file():
            raise SagelaunchError(f"entry_point {job.entry_point!r} is not in source_dir {facts.code_archive!r}",
                                  field="entry_point", value=job.entry_point,
                                  allowed=f"a file in source_dir {facts.code_archive}",
                                  fix="name a file the source_dir archive holds")
        return
    for code_dir in code_dirs:
        for path, name in facts.code_files:
            target = code_dir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                shutil.copy2(path, target)
            except OSError as error:  # a full disk fails in sendfile, which names no file
                raise with_path(error, target) from error


def _link_checkpoints(job: LocalJob, layout: HostLayout) -> None:
    if job.facts.checkpoint_local_path:
        # the same folder for every run that names it: resume can be tested
        shared = Path(job.facts.checkpoint_local_path).expanduser().resolve()
        shared.mkdir(parents=True, exist_ok=True)
        layout.checkpoints_dir.symlink_to(shared, target_is_directory=True)
    else:
        layout.checkpoints_dir.mkdir(parents=True, exist_ok=True)


def checkpoint_folders(layouts: list[HostLayout]) -> list[Path]:
    """Each distinct checkpoint folder once (hosts sharing checkpoint_local_path share one)."""
    seen: dict[Path, None] = {}
    for layout in layouts:
        seen.setdefault(layout.checkpoints_dir.resolve(), None)
    return list(seen)


def _restore_checkpoints(job: LocalJob, layouts: list[HostLayout]) -> list[str]:
    """As on SageMaker: what is under checkpoint_s3_uri is in checkpoints/ when the job starts — except where
    checkpoint_local_path already holds a newer file (a run that crashed before uploading): that one is kept, and
    named in the job's log. Returns those notes."""
    uri, region = job.checkpoint_s3_uri, job.facts.region
    if not uri:
        return []
    notes = []
    for folder in checkpoint_folders(layouts):
        kept = s3.restore_by_age(uri.rstrip("/") + "/", folder, region)
        if kept:
            names = ", ".join(str(path.relative_to(folder)) for path in kept[:10]) + (" …" if len(kept) > 10 else "")
            notes.append(f"checkpoints: kept {len(kept)} file(s) of {folder} newer than their copies under "
                         f"checkpoint_s3_uri {uri} (never replaced by an older one): {names}")
    return notes


def _fast_file(job: LocalJob, channel: channel_io.InputChannel) -> bool:
    """FastFile on SageMaker streams the channel read-only: the local view is read-only too."""
    mode = channel.input_mode if channel.mode_given else job.input_mode
    return mode == "FastFile"


def runs_one_process_per_host(job: LocalJob) -> bool:
    """The script itself, once per host, with no launcher: TensorFlow always; PyTorch without `distribution=`, where
    the PyTorch toolkit's default runner (ProcessRunner, sagemaker_pytorch_container/training.py) starts
    `python train.py` — no torchrun, so no RANK, LOCAL_RANK or WORLD_SIZE (a script that reads them sees them unset,
    as on SageMaker)."""
    return job.facts.framework == "tensorflow" or (not job.facts.distributed and job.facts.processes_per_host == 1)


def host_command(job: LocalJob, python: str, entry: Path, args: list[str], *, host_index: int, hosts: int,
                 master_port: int, log_dir: Path) -> list[str]:
    """What one host runs: the script itself, or torchrun starting the host's ranks of a distributed job."""
    if runs_one_process_per_host(job):
        return ([python, str(entry)] if entry.suffix == ".py" else [str(entry)]) + args
    command = [
        python, "-m", "torch.distributed.run",
        "--nnodes", str(hosts), "--node-rank", str(host_index),
        "--nproc-per-node", str(job.facts.processes_per_host),
        # static rendezvous on a c10d TCPStore: node rank i holds global ranks i*P … i*P+P-1
        "--master-addr", "127.0.0.1", "--master-port", str(master_port),
        "--max-restarts", "0", "--log-dir", str(log_dir), "--tee", "3",
    ]
    if entry.suffix != ".py":
        command.append("--no-python")
    return command + [str(entry), *args]


def build(job: LocalJob, *, resolved_channels: list[channel_io.ResolvedChannel], python: str, master_port: int,
          tf_ports: list[int], stop_grace: float, base_env: dict[str, str]) -> JobPlan:
    """Create the job folder's contents from the job's request and return the plan (also written to plan.json)."""
    facts, job_dir, environment = job.facts, job.facts.job_dir, job.environment
    # the script's arguments (SM_USER_ARGS keeps to_cmd_args' list; the command line is what the toolkit's shell
    # makes of it), checked before anything is laid out, downloaded or installed
    args = contract.command_line_args(contract.split_hyperparameters(
        contract.decode_hyperparameters(job.hyperparameters))[0])
    hosts = contract.host_names(job.instance_count)
    layouts = {host: HostLayout(job_dir / host) for host in hosts}
    for layout in layouts.values():
        layout.create()
        _link_checkpoints(job, layout)
    checkpoint_notes = _restore_checkpoints(job, list(layouts.values()))
    copy_code(job, [l.code_dir for l in layouts.values()])
    binds: list[tuple[Path, Path]] = []
    channel_notes = []
    for resolved in resolved_channels:
        read_only = channel_io.materialize(resolved, job_dir,
                                           [l.channel_dir(resolved.channel.name) for l in layouts.values()],
                                           facts.region, fast_file=_fast_file(job, resolved.channel))
        if read_only:
            channel_notes.append(f"channel {resolved.channel.name!r} is a read-only view of {read_only[0][0]} "
                                 "(FastFile, or too large to copy): writes under it fail")
        binds += read_only
    requirement_dirs, requirement_notes = requirements.install(layouts[hosts[0]].code_dir, python, registry.home())
    job_module_dirs, job_module_notes = job_module_paths(job, python)
    job_env = {**base_env, **environment}  # what the job's processes see before sagelaunch adds its own
    mpi_variables, mpi_notes = exported_environment(
        job.hyperparameter("sagemaker_mpi_custom_mpi_options", ""), job_env)
    gpu_sets, cpus = gpu_slices(visible_gpus(job.instance_type, base_env), len(hosts)), contract.num_cpus()
    tensorflow, direct = facts.framework == "tensorflow", runs_one_process_per_host(job)
    host_plans = []
    for index, host in enumerate(hosts):
        layout = layouts[host]
        hyperparameters = job.host_hyperparameters(layout)
        contract.write_config_files(layout, job, host, hosts, hyperparameters)
        env = {**environment, **mpi_variables}
        env.update(contract.environment(layout, job, host, hosts, hyperparameters, len(gpu_sets[index]), cpus))
        if instance_type_record(job.instance_type).gpus_from_machine:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(gpu_sets[index])
        env["PYTHONUNBUFFERED"] = "1"  # lines reach the log as they are printed
        env["PYTHONPATH"] = _python_path(layout.code_dir, job_env, job_module_dirs, requirement_dirs)
        if tensorflow:
            env["TF_CONFIG"] = contract.tf_config(hosts, host, tf_ports)
        else:
            if direct:  # the PyTorch toolkit sets these for every job (master: the first host, here this machine)
                env["MASTER_ADDR"], env["MASTER_PORT"] = "127.0.0.1", str(master_port)
            else:
                env["TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE"] = rank_prefix_template(host)
                # when a rank fails torchrun SIGTERMs its siblings and waits this long before SIGKILL
                # (30 s by default): keep the whole job's teardown within the 10 s we promise
                env.setdefault("TORCH_ELASTIC_SHUTDOWN_TIMEOUT", "3")
            if "OMP_NUM_THREADS" not in job_env:
                # share this machine's cores between the ranks (torchrun would pick 1 and say so)
                env["OMP_NUM_THREADS"] = str(max(1, cpus // (facts.processes_per_host * job.instance_count)))
        command = host_command(job, python, layout.code_dir / job.entry_point, args, host_index=index,
                               hosts=len(hosts), master_port=master_port, log_dir=job_dir / "logs" / "torchrun" / host)
        monitor = None
        if job.profiler_runs:
            monitor = [python, "-m", "sagelaunch.profiler.monitor", "--config", str(layout.profiler_config_file),
                       "--out", str(layout.profiler_dir), "--host", host]
        host_plans.append(HostPlan(
            host=host, root=layout.root, cwd=layout.code_dir, command=command, env=env,
            # one process per host: its rank is the host's index; under torchrun the lines name their ranks
            rank=index if direct else None, rank_base=index * facts.processes_per_host, monitor=monitor))
    plan = JobPlan(
        job_name=job.name, job_dir=job_dir, framework=facts.framework, python=python, hosts=host_plans,
        max_run=job.max_run, stop_grace=stop_grace, region=facts.region, artifact_prefix=facts.artifact_prefix,
        checkpoint_s3_uri=job.checkpoint_s3_uri,
        notes=requirement_notes + job_module_notes + mpi_notes + channel_notes + checkpoint_notes, read_only_binds=binds,  # written to the job log when it starts
        # what the job writes after this moment goes back to checkpoint_s3_uri (restored files do not)
        checkpoints_restored_at=time.time())
    write_private_text(job_dir / PLAN_FILE, plan.model_dump_json(indent=2))  # every host's environment
    return plan


def supervisor_env(base_env: dict[str, str]) -> dict[str, str]:
    env = dict(base_env)
    env["PYTHONPATH"] = ":".join(p for p in (str(INSTALL_ROOT), base_env.get("PYTHONPATH", "")) if p)
    return env
