"""Run a spec on this machine, without Docker: the SageMaker contract in a job folder + torchrun per host.

`submit` checks everything it can before any process starts (entry point, framework, ports,
channels, folders), records the job in the local registry, lays out the job folder and
starts the job's watchdog (launcher.local.watchdog) detached from the caller; the watchdog starts
the supervisor (launcher.local.supervisor), which runs the job, and ends the job if it dies.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sagelaunch.jobspec.contract import TERMINAL_STATUSES, host_profiler_dir
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.net import free_port
from sagelaunch.jobspec.spec import TrainingJobSpec
from sagelaunch.jobspec.suggest import did_you_mean
from sagelaunch.launcher.common.jobs import JobFailedError, TrainingJob, wants_logs
from sagelaunch.launcher.common.safe_write import PRIVATE_FOLDER, private_folder
from sagelaunch.launcher.local import channels, plan, preflight, registry, watchdog
from sagelaunch.launcher.local.artifacts import check_outputs_free
from sagelaunch.launcher.local.local_job import LocalJob, compile_local_job
from sagelaunch.launcher.local.logs import LogFollower, tail_lines
from sagelaunch.launcher.local.path_errors import job_places, path_error_text
from sagelaunch.launcher.local.record import first_record
from sagelaunch.launcher.local.watchdog import FAILURE_GRACE_SECONDS

_OPTIONS = {"python", "master_port", "tf_ports", "stop_grace"}
DEFAULT_STOP_GRACE = 10.0


def _check_options(options: dict[str, Any]) -> None:
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        hints = [repr(u) + did_you_mean(u, _OPTIONS) for u in unknown]
        raise SagelaunchError(f"local backend options {', '.join(hints)} are unknown; allowed: {sorted(_OPTIONS)}",
                              field="options", value=unknown, allowed=", ".join(sorted(_OPTIONS)),
                              fix="drop them or correct their names")


def submit(spec: TrainingJobSpec, *, wait: bool = True, logs: bool = True, **options: Any) -> "LocalTrainingJob":
    """Run `spec` here. Options: python (the job's interpreter, default this one), master_port,
    tf_ports (one per host), stop_grace (seconds between SIGTERM and SIGKILL, default 10).

    Five phases, in order: check (everything that can be wrong, before any process starts), compile (the request
    SageMaker would get, and the local facts), record (the registry), lay out (the job folder), start (the watchdog).
    A failure while laying out or starting marks the recorded job Failed."""
    checked = _check(spec, options)
    job = _compile(spec, checked)
    _record(spec, job, checked)
    with _failing_the_record(spec.job_name, checked.job_dir, job.facts.artifact_prefix):
        base_env = dict(os.environ)
        _lay_out(spec, job, checked, base_env, logs)
        proc = _start(spec.job_name, checked.job_dir, base_env)
    handle = LocalTrainingJob(spec.job_name, _process=proc, sent_hyperparameters=job.hyperparameters)
    if wait:
        handle.wait(logs=logs)
    return handle


@dataclass(frozen=True)
class _Checked:
    """What the check phase found and the later phases use."""

    job_dir: Path
    python: str
    files: Any  # preflight.source_files: the code files to copy
    warning: str | None  # the framework check's, printed once every check has passed
    ports: list[int]  # TensorFlow's, one per host
    master_port: int
    resolved: list[Any]  # each input channel, resolved (its S3 keys or local folder)
    stop_grace: float


def _check(spec: TrainingJobSpec, options: dict[str, Any]) -> _Checked:
    """Everything that can be wrong with the spec and the options, found before anything is written."""
    _check_options(options)
    python = str(options.get("python") or sys.executable)
    registry.check_new_name(spec.job_name)
    job_dir = registry.job_dir(spec.job_name)
    if job_dir.exists():
        raise SagelaunchError(f"job_name {spec.job_name!r}: the folder {job_dir} already exists; choose another job_name",
                              field="job_name", value=spec.job_name, allowed="a name no local job has",
                              fix="choose another job_name")
    files = preflight.source_files(spec)
    warning = preflight.check_framework(spec, python)
    if spec.framework == "tensorflow":
        ports = options.get("tf_ports") or [free_port() for _ in range(spec.compute.instance_count)]
        if len(ports) != spec.compute.instance_count:
            raise SagelaunchError(f"tf_ports={ports}: give one port per host ({spec.compute.instance_count})", field="tf_ports",
                                  value=ports, allowed=f"{spec.compute.instance_count} ports", fix="give one port per host")
        ports = [preflight.check_port(int(p), "tf_ports") for p in ports]
        master_port = 0
    else:
        ports = []
        given_port = options.get("master_port")
        master_port = preflight.check_port(int(given_port), "master_port") if given_port else free_port()
    resolved = [channels.resolve(channel, spec.region) for channel in spec.inputs]
    if spec.output.checkpoint_s3_uri:
        channels.check_s3_prefix(spec.output.checkpoint_s3_uri, spec.region, "checkpoint_s3_uri")
    if spec.output.output_path and not spec.output.output_path.startswith("s3://"):
        preflight.check_no_loop(channels.local_path(spec.output.output_path), "output_path")
    return _Checked(job_dir=job_dir, python=python, files=files, warning=warning, ports=ports,
                    master_port=master_port, resolved=resolved,
                    stop_grace=float(options.get("stop_grace", DEFAULT_STOP_GRACE)))


def _compile(spec: TrainingJobSpec, checked: _Checked) -> LocalJob:
    """The request SageMaker would get and the local facts; then the folders they write to, checked."""
    job = compile_local_job(spec, checked.job_dir, checked.files)
    prefix = job.facts.artifact_prefix
    if not prefix.startswith("s3://"):
        preflight.check_writable_folder(Path(prefix), "output_path")
    if spec.output.output_path:  # <output_path>/<job>/output is this job's alone, as SageMaker's job names are
        check_outputs_free(prefix, spec.job_name, spec.region)
    if spec.output.checkpoint_local_path:
        preflight.check_writable_folder(Path(spec.output.checkpoint_local_path).expanduser(), "checkpoint_local_path")
    return job


def _record(spec: TrainingJobSpec, job: LocalJob, checked: _Checked) -> None:
    """Every check passed: the warning (if any) is printed and the job enters the registry."""
    if checked.warning:
        _console(stderr=True).print(checked.warning, style="yellow", soft_wrap=True, markup=False, highlight=False)
    registry.create(first_record(job.request, spec.region, checked.job_dir, registry.now()))


@contextmanager
def _failing_the_record(job_name: str, job_dir: Path, prefix: str) -> Iterator[None]:
    """A failure inside marks the recorded job Failed; a file error is named by its path and setting."""
    try:
        yield
    except BaseException as error:
        named = path_error_text(error, job_places(job_dir, prefix)) if isinstance(error, OSError) else None
        try:
            registry.transition(job_name, "Failed", "Training job failed", TrainingJobStatus="Failed",
                                FailureReason=f"ClientError: {named or error}", TrainingEndTime=registry.now())
        except ValueError:  # the registry cannot be written either (a full home): the error below says why
            pass
        if named:  # one line naming the path and its setting, not a traceback
            raise SagelaunchError(f"job {job_name}: {named}", field="job_name", value=job_name,
                                  fix=named) from error
        raise


def _lay_out(spec: TrainingJobSpec, job: LocalJob, checked: _Checked, base_env: dict[str, str],
             logs: bool) -> None:
    """The job folder (private: plan.json and the config files hold the job's secrets), its inputs and plan."""
    private_folder(checked.job_dir.parent)
    checked.job_dir.mkdir(mode=PRIVATE_FOLDER)
    if spec.inputs or (spec.code.source_dir or "").startswith("s3://"):
        registry.transition(spec.job_name, "Downloading", "Downloading input data")
    downloads = sum(len(r.s3_keys) for r in checked.resolved)
    with _status(f"Downloading {downloads} input objects from S3…" if logs and downloads else None):
        plan.build(job, resolved_channels=checked.resolved, python=checked.python, master_port=checked.master_port,
                   tf_ports=checked.ports, stop_grace=checked.stop_grace, base_env=base_env)
    (checked.job_dir / "logs").mkdir(exist_ok=True)


def _start(job_name: str, job_dir: Path, base_env: dict[str, str]) -> subprocess.Popen:
    """The watchdog, detached from the caller (it starts the supervisor); its pid goes into the record."""
    with open(job_dir / "logs" / "supervisor.log", "ab") as supervisor_log:
        proc = subprocess.Popen(watchdog.command(job_dir), env=plan.supervisor_env(base_env),
                                stdin=subprocess.DEVNULL, stdout=supervisor_log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    registry.set_watchdog(job_name, proc.pid, _create_time(proc.pid))
    return proc


def _create_time(pid: int) -> float:
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return 0.0


def _status(message: str | None) -> Any:
    """A Rich spinner while long preparation runs (nothing when there is nothing long to do)."""
    if message is None:
        return nullcontext()
    return _console(stderr=True).status(message)


def _console(stderr: bool = False) -> Any:
    from rich.console import Console

    return Console(stderr=stderr)


_HOST_STYLES = ("cyan", "magenta", "green", "yellow", "blue", "red")


class _LinePrinter:
    """Writes log lines straight to the console's file, a batch at a time: Rich renders some 10,000 lines
    a second and a job can print far more, so `wait()` would fall behind. The `[algo-N rankR]` prefix is
    coloured by host (rendered by Rich once per prefix) when the console shows colours."""

    _PREFIX = re.compile(r"\[(?:algo-(\d+)(?: rank\d+)?|sagelaunch)\]")

    def __init__(self, console: Any):
        self.console = console
        self.colour = console.is_terminal and console.color_system is not None
        self._rendered: dict[str, str] = {}

    def _render(self, prefix: str, host: str | None) -> str:
        from rich.text import Text

        style = "bold" if host is None else _HOST_STYLES[(int(host) - 1) % len(_HOST_STYLES)]
        with self.console.capture() as captured:
            self.console.print(Text(prefix, style=style), end="")
        return captured.get()

    def write(self, line: str) -> None:
        if self.colour and (match := self._PREFIX.match(line)):
            prefix = match.group(0)
            if prefix not in self._rendered:
                self._rendered[prefix] = self._render(prefix, match.group(1))
            line = self._rendered[prefix] + line[match.end():]
        self.console.file.write(line + "\n")

    def flush(self) -> None:
        self.console.file.flush()


def watchdog_grace() -> float:
    return FAILURE_GRACE_SECONDS


def refresh_unwatched() -> None:
    """Settle every unfinished job whose supervisor died unnoticed (`jobs list` shows true statuses)."""
    for status in ("InProgress", "Stopping"):
        for record in registry.list_jobs(status=status):
            LocalTrainingJob(record["TrainingJobName"]).describe()


class LocalTrainingJob(TrainingJob):
    """A job run by the local backend; everything it knows comes from the registry and the job folder."""

    backend = "local"

    def __init__(self, name: str, _process: subprocess.Popen | None = None,
                 sent_hyperparameters: dict[str, str] | None = None):
        super().__init__(name, sent_hyperparameters)
        self._process = _process  # the supervisor, when this process started it

    @property
    def job_dir(self) -> Path:
        return Path(registry.get(self.name)["JobDir"])

    @property
    def log_file(self) -> Path:
        return self.job_dir / "logs" / "job.log"

    def describe(self) -> dict[str, Any]:
        record = registry.get(self.name)
        if record["TrainingJobStatus"] not in TERMINAL_STATUSES and not self._watched():
            record = self._end_unwatched()
        return record

    def _watched(self) -> bool:
        """Is the job's supervisor, or its watchdog, alive? (Neither recorded yet: still being laid out.)"""
        from sagelaunch.launcher.local.processes import same_process  # lazy: psutil, only for a job's own processes

        if self._process is not None and self._process.poll() is None:
            return True
        found = [registry.supervisor(self.name), registry.watchdog(self.name)]
        if self._process is None and found == [None, None]:
            return True
        return any(entry is not None and same_process(*entry) is not None for entry in found)

    def _end_unwatched(self) -> dict[str, Any]:
        """Supervisor and watchdog are gone: end the job's recorded processes still running, mark it Failed."""
        from sagelaunch.launcher.local.processes import end_recorded  # lazy: psutil, only for a job's own processes

        ended = end_recorded(registry.processes(self.name), grace=watchdog_grace())
        record = registry.get(self.name)
        if record["TrainingJobStatus"] in TERMINAL_STATUSES:
            return record
        reason = ("InternalServerError: the job's supervisor process ended unexpectedly"
                  + (f"; sagelaunch ended the {len(ended)} process(es) it left running" if ended else ""))
        return registry.fail_unless_ended(self.name, reason)

    def _pause(self, seconds: float) -> None:
        if self._process is not None:
            try:
                self._process.wait(timeout=seconds)
            except subprocess.TimeoutExpired:
                pass
        else:
            time.sleep(seconds)

    def wait(self, logs: bool | str = True) -> dict[str, Any]:
        """Block until the job ends, streaming its logs; Ctrl-C stops the job."""
        printer = _LinePrinter(_console()) if wants_logs(logs) else None
        follower = LogFollower(self.log_file)
        try:
            while True:
                record = self.describe()
                done = record["TrainingJobStatus"] in TERMINAL_STATUSES
                if printer is not None:
                    for line in follower.read(final=done):  # everything written so far, read incrementally
                        printer.write(line)
                    printer.flush()
                if done:
                    break
                self._pause(0.1)
            self._wait_supervisor_exit()
        except KeyboardInterrupt:
            self.stop()
            self._wait_terminal(timeout=DEFAULT_STOP_GRACE + 30)
            raise
        if record["TrainingJobStatus"] == "Failed" or record.get("SecondaryStatus") == "MaxRuntimeExceeded":
            raise JobFailedError(self.name, record["TrainingJobStatus"] if record["TrainingJobStatus"] == "Failed"
                                 else "MaxRuntimeExceeded", record.get("FailureReason"), self._last_lines(40))
        return record

    def _wait_supervisor_exit(self, timeout: float = 30) -> None:
        """The status is final just before the supervisor exits: let it (and its watchdog) finish, so nothing
        outlives wait()."""
        if self._process is not None:
            try:
                self._process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                pass
            return
        import psutil

        from sagelaunch.launcher.local.processes import same_process  # lazy: psutil, only for a job's own processes

        for found in (registry.supervisor(self.name), registry.watchdog(self.name)):
            proc = same_process(*found) if found is not None else None
            if proc is not None:
                try:
                    proc.wait(timeout=timeout)
                except psutil.TimeoutExpired:
                    pass

    def _wait_terminal(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        record = self.describe()
        while record["TrainingJobStatus"] not in TERMINAL_STATUSES and time.monotonic() < deadline:
            self._pause(0.1)
            record = self.describe()
        return record

    def _last_lines(self, count: int) -> list[str]:
        return tail_lines(self.log_file, count)

    def logs(self, follow: bool = False) -> Iterator[str]:
        """Lines of logs/job.log, each `[algo-N rankR] …`; follow=True tails until the job ends."""
        follower = LogFollower(self.log_file)
        while True:
            done = not follow or self.describe()["TrainingJobStatus"] in TERMINAL_STATUSES
            yield from follower.read(final=done)
            if done:
                return
            self._pause(0.1)

    def stop(self) -> None:
        """SIGTERM to the supervisor: it ends each host (SIGKILL after the grace period); status Stopped.

        A job nobody watches any more (supervisor and watchdog killed) has its survivors ended here."""
        record = registry.get(self.name)
        if not self._watched():
            self._end_unwatched()
            return
        if record["TrainingJobStatus"] in TERMINAL_STATUSES:
            return
        def to_stopping(current: dict[str, Any]) -> None:
            if current["TrainingJobStatus"] not in TERMINAL_STATUSES:  # it may have just ended
                current["TrainingJobStatus"] = "Stopping"

        registry.update(self.name, to_stopping)
        import psutil

        from sagelaunch.launcher.local.processes import same_process  # lazy: psutil, only for a job's own processes

        found = registry.supervisor(self.name)  # none yet: the supervisor reads "Stopping" when it starts
        proc = same_process(*found) if found is not None else None
        try:
            if proc is not None:
                proc.send_signal(signal.SIGTERM)
        except psutil.Error:
            pass

    @property
    def model_data(self) -> str | None:
        return self.describe().get("ModelArtifacts", {}).get("S3ModelArtifacts")

    @property
    def profiler_output(self) -> str | None:
        record = self.describe()
        if "ProfilerOutput" in record:
            return record["ProfilerOutput"]
        if record["TrainingJobStatus"] in TERMINAL_STATUSES:
            return None
        live = host_profiler_dir(record["JobDir"], "algo-1")
        return str(live) if record.get("ProfilerConfig") else None


def attach(name: str, **_options: Any) -> LocalTrainingJob | None:
    """The backend interface's attach: the local job called `name`, None when the registry has none
    (options such as region= concern SageMaker and are ignored here)."""
    return LocalTrainingJob(name) if registry.exists(name) else None


def list_jobs(status: str | None = None, limit: int | None = None) -> list[dict[str, Any]]:
    """The backend interface's list_jobs: the local registry's records, newest first (jobs whose supervisor died
    unnoticed settled first, so their status is true)."""
    refresh_unwatched()
    return registry.list_jobs(status=status, limit=limit)
