"""The process that runs one local job: `python -m sagelaunch.launcher.local.supervisor <job folder>`.

It runs detached from the caller (its own session, under the job's watchdog), so a job outlives
the notebook that started it, and stop() works from any process (SIGTERM to this process). It starts each host,
routes logs, watches exit codes and max_run, ends every process of the job on failure or
stop, packs the artifacts and records each status change in the registry.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sagelaunch.jobspec.errors import SagelaunchRuntimeError
from sagelaunch.launcher.local.logs import LogRouter, drop_torchrun_copies
from sagelaunch.launcher.local.path_errors import job_places, path_error_text
from sagelaunch.launcher.local.plan_model import HostPlan, JobPlan, load_plan

# Only what starting the hosts needs is imported up front; the rest loads while torchrun starts.
if TYPE_CHECKING:
    from sagelaunch.launcher.local import artifacts, failure, processes, registry
    from sagelaunch.launcher.local.host_layout import HostLayout
else:
    registry = processes = artifacts = failure = HostLayout = None  # bound by _late_imports()


def _late_imports() -> None:
    global registry, processes, artifacts, failure, HostLayout
    from sagelaunch.launcher.local import (  # lazy: the supervisor starts the hosts before the rest loads (top of the file)
        artifacts,
        failure,
        processes,
        registry,  # lazy: the supervisor starts the hosts before the rest loads (top of the file)
    )
    from sagelaunch.launcher.local.host_layout import (
        HostLayout,  # lazy: the supervisor starts the hosts before the rest loads (top of the file)
    )


def places(plan: JobPlan) -> list[tuple[str, Path]]:
    return job_places(plan.job_dir, plan.artifact_prefix)


POLL_SECONDS = 0.02
# After a rank failed there is nothing to save: a short grace keeps "every process ended within 10 s"
FAILURE_GRACE_SECONDS = 3.0
TREE_REFRESH_SECONDS = 0.5


class Supervisor:
    def __init__(self, plan: JobPlan):
        self.plan = plan
        self.name = plan.job_name
        self.job_dir = plan.job_dir
        self.router = LogRouter(self.job_dir / "logs")
        self.tracker: processes.ProcessTracker | None = None
        self.stop_requested = threading.Event()
        self.hosts: dict[str, subprocess.Popen] = {}
        self.monitors: list[subprocess.Popen] = []
        self.threads: list[threading.Thread] = []
        self.recorded: set[tuple[int, float, int]] = set()

    # --- starting -------------------------------------------------------------------------
    def _spawn(self, host_plan: HostPlan) -> subprocess.Popen:
        env = {**os.environ, **host_plan.env}
        proc = subprocess.Popen(host_plan.command, cwd=host_plan.cwd, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        for stream, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            thread = threading.Thread(target=self.router.pump, args=(host_plan.host, pipe), daemon=True,
                                      kwargs={"stream": stream, "rank": host_plan.rank,
                                              "rank_base": host_plan.rank_base})
            thread.start()
            self.threads.append(thread)
        return proc

    def _start_monitor(self, host_plan: HostPlan) -> None:
        """The profiler's system monitor, when `sagelaunch.profiler.monitor` exists in the job's Python; never fatal."""
        command = host_plan.monitor or []
        env = {**os.environ, **host_plan.env}
        try:
            probe = subprocess.run([command[0], "-c", "import importlib.util, sys; "
                                    "sys.exit(0 if importlib.util.find_spec('sagelaunch.profiler.monitor') else 3)"],
                                   env=env, cwd=host_plan.root, capture_output=True, timeout=60)
            if probe.returncode != 0:
                self.router.note(f"{host_plan.host}: profiler.monitor is not importable; no system monitor")
                return
            log = open(self.job_dir / "logs" / f"{host_plan.host}-profiler-monitor.log", "ab")
            # The monitor starts with SIGTERM/SIGINT blocked (a child inherits its parent thread's mask) and unblocks
            # them once its handlers are in: a job that ends while the monitor's interpreter is still starting then
            # still gets the monitor's one sample instead of a monitor killed before it wrote anything.
            stopping = {signal.SIGTERM, signal.SIGINT}
            unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, stopping)
            try:
                self.monitors.append(subprocess.Popen(command, cwd=host_plan.root, env=env, stdin=subprocess.DEVNULL,
                                                      stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)
        except Exception as error:  # the monitor is an extra: the job runs without it
            self.router.note(f"{host_plan.host}: profiler monitor not started: {error}")

    # --- running --------------------------------------------------------------------------
    def run(self) -> None:
        signal.signal(signal.SIGTERM, lambda *_: self.stop_requested.set())
        signal.signal(signal.SIGINT, lambda *_: self.stop_requested.set())
        started = time.monotonic()
        for note in self.plan.notes:
            self.router.note(note)
        for host_plan in self.plan.hosts:
            self.hosts[host_plan.host] = self._spawn(host_plan)
        _late_imports()
        processes.become_subreaper()
        self.tracker = processes.ProcessTracker()
        registry.transition(self.name, "Training", "Training image download completed. Training in progress.",
                            TrainingStartTime=registry.now())
        for host_plan in self.plan.hosts:
            if host_plan.monitor:
                self._start_monitor(host_plan)
        outcome = self._watch(started)
        self._finish(outcome, started)

    def _watch(self, started: float) -> dict[str, Any]:
        deadline = started + self.plan.max_run
        next_refresh = 0.0
        while True:
            now = time.monotonic()
            if now >= next_refresh:
                # a stop() that found no supervisor to signal yet left its wish in the registry
                if registry.get(self.name)["TrainingJobStatus"] == "Stopping":
                    self.stop_requested.set()
                self._tracker().refresh(os.getpid())
                processes.reap_orphans(os.getpid(), keep=self._own_pids())
                self._record_processes()
                next_refresh = now + TREE_REFRESH_SECONDS
            codes = {host: proc.poll() for host, proc in self.hosts.items()}
            failed = [host for host, code in codes.items() if code not in (None, 0)]
            if failed:
                return {"kind": "failed", "host": failed[0], "code": codes[failed[0]]}
            if all(code == 0 for code in codes.values()):
                return {"kind": "completed"}
            if self.stop_requested.is_set():
                return {"kind": "stopped"}
            if now >= deadline:
                return {"kind": "max_run"}
            time.sleep(POLL_SECONDS)

    def _record_processes(self) -> None:
        """Keep the registry's list of the job's processes current: if both this process and its watchdog
        die, whoever next looks at the job ends what is left (launcher.local.backend)."""
        found = {entry for proc in self._tracker().alive() if (entry := processes.identity(proc)) is not None}
        if found != self.recorded:
            registry.set_processes(self.name, sorted(found))
            self.recorded = found

    def _tracker(self) -> processes.ProcessTracker:
        if self.tracker is None:  # run() starts it before anything watches or ends the job's processes
            raise SagelaunchRuntimeError("the supervisor's process tracker is not started")
        return self.tracker

    def _is_torchrun(self, host: str) -> bool:
        return self.plan.host(host).rank is None

    def _own_pids(self) -> set[int]:
        return {p.pid for p in [*self.hosts.values(), *self.monitors]}

    def _end_everything(self, grace: float | None = None) -> None:
        grace = self.plan.stop_grace if grace is None else grace
        agents = {proc.pid for host, proc in self.hosts.items() if self._is_torchrun(host)}
        killed = processes.terminate(self._tracker(), os.getpid(), grace, own_children=self._own_pids(), agents=agents)
        if killed:
            try:
                self.router.note(f"SIGKILL to {len(killed)} process(es) still running {grace:g} s after SIGTERM: "
                                 + ", ".join(str(pid) for pid in killed))
            except ValueError:  # the log is already closed (the supervisor itself failed late)
                pass
        for proc in [*self.hosts.values(), *self.monitors]:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass

    def _finish(self, outcome: dict[str, Any], started: float) -> None:
        kind = outcome["kind"]
        if kind != "completed":
            reason = {"failed": "a process failed", "stopped": "stop requested", "max_run": "max_run reached"}[kind]
            self.router.note(f"ending every process of the job ({reason})")
            # torchrun's own messages while it is being ended are noise: keep them in <host>.log only
            self.router.quiet.update(h for h in self.hosts if h != outcome.get("host"))
        if kind == "stopped":
            registry.update(self.name, TrainingJobStatus="Stopping")
        grace = min(FAILURE_GRACE_SECONDS, self.plan.stop_grace) if kind == "failed" else None
        self._end_everything(grace)  # also ends the monitors of a completed job
        for thread in self.threads:
            thread.join(timeout=10)
        drop_torchrun_copies(self.job_dir / "logs" / "torchrun")
        fields: dict[str, Any] = {}
        if kind == "failed":
            fields["FailureReason"] = self._failure_reason(outcome["host"], outcome["code"])
        elif kind == "completed" and (ignored := self._ignored_model_parallelism()):
            self.router.note(ignored)
            kind, fields["FailureReason"] = "failed", f"ClientError: {ignored}"
        elif kind == "max_run":
            fields["FailureReason"] = (f"MaxRuntimeExceeded: the job ran longer than max_run="
                                       f"{self.plan.max_run} seconds and was stopped")
        registry.transition(self.name, "Uploading", "Uploading generated training model", **fields)
        try:
            placed = artifacts.publish({h.host: HostLayout(h.root) for h in self.plan.hosts},
                                       self.plan.artifact_prefix, self.job_dir / "staging", self.plan.region,
                                       self.name)
            fields["ModelArtifacts"] = {"S3ModelArtifacts": placed["model"]}
            fields["OutputArtifacts"] = {"S3OutputArtifacts": placed["output"]}
            if placed["profiler"]:
                fields["ProfilerOutput"] = placed["profiler"]
            if self.plan.checkpoint_s3_uri:  # SageMaker keeps checkpoints/ in sync with checkpoint_s3_uri
                from sagelaunch.launcher.local import s3  # lazy: only a job with checkpoint_s3_uri syncs them
                from sagelaunch.launcher.local.plan import (
                    checkpoint_folders,  # lazy: only a job with checkpoint_s3_uri syncs them
                )

                for folder in checkpoint_folders([HostLayout(h.root) for h in self.plan.hosts]):
                    s3.upload_tree(folder, self.plan.checkpoint_s3_uri, self.plan.region,
                                   newer_than=self.plan.checkpoints_restored_at)
        except Exception as error:  # keep the job's own outcome; say why nothing was uploaded
            why = path_error_text(error, places(self.plan)) if isinstance(error, OSError) else str(error)
            self.router.note(f"could not publish artifacts: {why}")
            if kind == "completed":
                kind, fields["FailureReason"] = "failed", f"ClientError: could not publish artifacts: {why}"
        status, secondary, message = {
            "completed": ("Completed", "Completed", "Training job completed"),
            "failed": ("Failed", "Failed", "Training job failed"),
            "stopped": ("Stopped", "Stopped", "Training job stopped"),
            "max_run": ("Stopped", "MaxRuntimeExceeded", "Training job runtime exceeded MaxRuntimeInSeconds provided"),
        }[kind]
        end = registry.now()
        fields.update(TrainingJobStatus=status, TrainingEndTime=end,
                      TrainingTimeInSeconds=max(1, round(time.monotonic() - started)))
        self.router.note(f"job {self.name} {status}" + (f" ({fields['FailureReason']})" if "FailureReason" in fields else ""))
        self.router.close()
        if self.router.write_error is not None:  # the job's output is incomplete: never Completed
            lost = f"ClientError: the job's log could not be written: {path_error_text(self.router.write_error, places(self.plan))}"
            if status == "Completed":
                status, secondary, message = "Failed", "Failed", "Training job failed"
            fields.update(TrainingJobStatus=status,
                          FailureReason="; ".join(r for r in (fields.get("FailureReason"), lost) if r))
        registry.transition(self.name, secondary, message, **fields)

    def _ignored_model_parallelism(self) -> str | None:
        """mp_parameters with a model-parallel degree above 1, but no process called smp.init(): the ranks ran
        as independent processes (e.g. transformers' Trainer without "partitions"), which is never Completed."""
        from sagelaunch.jobspec.contract import (  # lazy: read once the ranks ended
            SAGELAUNCH_SMP_INIT_DIR,
            SM_HP_MP_PARAMETERS,
        )
        from sagelaunch.jobspec.distribution import (  # lazy: read once the ranks ended
            model_parallel_degrees,
            mp_parameters_of,
        )

        host = self.plan.hosts[0].env
        if SAGELAUNCH_SMP_INIT_DIR not in host:
            return None
        degrees = model_parallel_degrees(mp_parameters_of(host[SM_HP_MP_PARAMETERS]))  # smp.init's own type
        if not degrees or any(any(Path(h.env[SAGELAUNCH_SMP_INIT_DIR]).glob("rank*")) for h in self.plan.hosts):
            return None
        asked = ", ".join(f"{k}={v}" for k, v in degrees.items())
        return (f"mp_parameters asks for {asked}, but no process called smp.init(): the ranks ran as independent "
                "processes, not model-parallel. Fix: call smp.init() (import smdistributed.modelparallel.torch as "
                "smp); transformers' Trainer does so only when mp_parameters holds \"partitions\" (e.g. "
                "\"partitions\": 1), and its SMP path needs CUDA")

    def _failure_reason(self, host: str, code: int) -> str:
        host_plan = self.plan.host(host)
        rank, exit_code = host_plan.rank, code
        if rank is None:  # torchrun: its summary names the first rank that failed and its exit code
            root_rank, root_code = failure.torchrun_root_cause(self.router.host_tails[host])
            rank, exit_code = root_rank, root_code if root_code is not None else code
        tail = list(self.router.stderr_tails.get((host, rank), []))
        if not tail and rank is None:
            tail = list(self.router.host_tails[host])
        failure_files = [HostLayout(h.root).failure_file for h in self.plan.hosts]
        return failure.failure_reason(host=host, rank=rank, exit_code=exit_code, stderr_tail=tail,
                                      failure_files=[HostLayout(host_plan.root).failure_file, *failure_files])


def _mount_channels(plan: JobPlan) -> None:
    """Read-only channel views, in a mount namespace of this process and its children only: the mounts end with
    the job's last process, however it ends, and nothing else on the machine sees them."""
    if not plan.read_only_binds:
        return
    from sagelaunch.launcher.local.channel_views import (  # lazy: only a job with read-only channel views
        bind_read_only,
        enter_private_mounts,
    )

    enter_private_mounts()
    for source, target in plan.read_only_binds:
        bind_read_only(source, target)


def main(argv: list[str]) -> int:
    job_dir = Path(argv[0])
    try:
        plan = load_plan(job_dir)
    except (OSError, ValueError) as error:  # a plan this release cannot run: the job says why; nothing starts
        _late_imports()
        registry.fail_unless_ended(job_dir.name, f"ClientError: {error}")
        raise
    supervisor = Supervisor(plan)
    try:
        _mount_channels(plan)
        supervisor.run()
    except BaseException as error:  # never leave a job InProgress with nobody watching it
        _late_imports()
        if supervisor.tracker is None:
            supervisor.tracker = processes.ProcessTracker()
        supervisor._end_everything()
        registry.transition(plan.job_name, "Failed", "Training job failed", TrainingJobStatus="Failed",
                            FailureReason="InternalServerError: the local supervisor failed: "
                                          + (path_error_text(error, places(plan)) if isinstance(error, OSError)
                                             else repr(error)),
                            TrainingEndTime=registry.now())
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
