"""The SageMaker Profiler API (smppy names) on our collectors: SMProfiler, Config, annotate, start/stop.

A failure inside the profiler never fails training: it is logged once and profiling stops.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from sagelaunch.jobspec import library_marks
from sagelaunch.profiler.job_settings import from_environment
from sagelaunch.profiler.output_process import ProfileOutput
from sagelaunch.profiler.recorder import AnnotationRecorder, now_ns
from sagelaunch.profiler.schema import TraceMeta
from sagelaunch.profiler.public_names import API
from sagelaunch.profiler.settings import Config, ResolvedConfig
from sagelaunch.profiler.system_monitor import SystemMonitor
from sagelaunch.profiler.torch_capture import KinetoWindow
from sagelaunch.profiler.torch_hooks import TorchHooks
from sagelaunch.profiler.window_writer import WindowWriter

if TYPE_CHECKING:
    from sagelaunch.profiler.torch_capture import FinishedWindow

log = logging.getLogger("sagelaunch.profiler")

# A window also ends when it holds this many of our annotation spans, so that memory stays bounded when windows are
# long (SMPFileRotationSecs defaults to 600 s) and steps are short: ~10 MB here, ~50 MB in the output process while
# it writes them (measured with a distinct name per span, step_N).
MAX_SPANS_PER_WINDOW = 50_000

__all__ = sorted(API)  # the SageMaker Profiler names; profiler/__init__ serves them lazily


class _Handle:
    __slots__ = ("name", "start", "rf", "step")

    def __init__(self, name: str, start: int, rf, step: bool = True) -> None:
        self.name, self.start, self.rf, self.step = name, start, rf, step


class SMProfiler:
    """Process-wide profiler session; use SMProfiler.instance()."""

    _instance: "SMProfiler | None" = None
    _lock = threading.Lock()

    @classmethod
    def instance(cls) -> "SMProfiler":
        with cls._lock:
            if cls._instance is None:
                cls._instance = cls()
            return cls._instance

    def __init__(self) -> None:
        self._config = Config()
        self._resolved: ResolvedConfig | None = None
        self.active = False
        self.failed = False
        self._recorder = AnnotationRecorder()
        self._kineto: KinetoWindow | None = None
        self._tf_logdir: str | None = None
        self._tf_start_ns = 0
        self._deadline_ns = 0
        self._window_end_ns = 0
        self._monitor: SystemMonitor | None = None
        self._hooks: TorchHooks | None = None  # profiler/torch_hooks.TorchHooks while a session runs in a script that imported torch
        self._writer: WindowWriter | None = None
        self._output: ProfileOutput | None = None
        self._depth = 0  # open annotations; an outermost one ending is a step for SMPFileRotationSteps
        self._steps_in_window = 0
        self._rotation_steps = 0
        self._step = 0  # steps since start_profiling(); the duty cycle of CPU operators counts them
        self._ops_steps = self._ops_every = 1
        self._ops_windows: list[list[int]] = []  # [start, end] ns of operator recording in the open window
        self.files: list[Path] = []

    # --- configuration ------------------------------------------------------------------------
    def configure(self, config: Config | None = None) -> None:
        self._config = config or Config()
        self._resolved = None

    @property
    def config(self) -> ResolvedConfig:
        if self._resolved is None:
            self._resolved = self._config.resolved()
        return self._resolved

    def rank_dir(self) -> Path:
        c = self.config
        return Path(c.output_dir) / c.host / f"rank-{c.rank}"

    # --- start / stop -------------------------------------------------------------------------
    def start_profiling(self) -> None:
        if self.active or self.failed:
            return
        try:
            c = self.config
            if c.disabled:
                log.info("profiler: disabled by the job's profiler configuration")
                return
            start = now_ns()
            self._deadline_ns = start + int(c.cpu_profiling_duration) * 1_000_000_000
            self._window_end_ns = start + int(c.file_rotation_secs) * 1_000_000_000
            self._steps_in_window = 0
            self._rotation_steps = int(c.file_rotation_steps)
            self._step = 0
            self._ops_steps, self._ops_every = int(c.cpu_ops_steps), int(c.cpu_ops_every_steps)
            self._ops_windows = []
            self._output = ProfileOutput()  # the helper process imports what writing needs while training runs
            self._writer = WindowWriter(self.files, self._output, self._writer_failed)
            self._start_device_capture(self._ops_phase(0))
            self._start_monitor_if_alone()
            self._install_torch_hooks()
            self.active = True
        except Exception:  # noqa: BLE001 — never fail the training job
            self._fail("start_profiling")
            self._end_outputs()  # the helper, the writer thread or tf.profiler may have started before it failed

    def stop_profiling(self) -> None:
        was_active, self.active = self.active, False
        self._remove_torch_hooks()
        try:
            if was_active:
                self._flush(restart=False)
            else:
                self._stop_window_quietly()  # after a writer failure the window may still be recording
        except Exception:  # noqa: BLE001
            self._fail("stop_profiling")
        finally:
            self._end_outputs()

    def _install_torch_hooks(self) -> None:
        if "torch" not in sys.modules or self._hooks is not None:
            return
        try:  # best effort: without them steps need annotations and input wait needs DataLoader operators
            self._hooks = TorchHooks(self._recorder, lambda: self.active)
        except Exception as exc:  # noqa: BLE001
            log.info("profiler: torch hooks not installed (%s)", exc)

    def _remove_torch_hooks(self) -> None:
        hooks, self._hooks = self._hooks, None
        if hooks is not None:
            try:
                hooks.remove()
            except Exception:  # noqa: BLE001
                log.info("profiler: torch hooks not removed", exc_info=True)

    def _end_outputs(self) -> None:
        """Stop tf.profiler (its device activity is queued as one more window), then end the writer thread (after it
        wrote what is queued: the last windows are on disk when stop_profiling returns), the utilisation monitor and
        the output process."""
        self._stop_tf()
        if self._writer is not None:
            self._writer.close()
        if self._monitor is not None:
            self._monitor.stop()
            self._monitor = None
        if self._output is not None:
            self._output.close()
            self._output = None

    def _ops_phase(self, step: int) -> bool:
        """Whether CPU operators are recorded in this step: the first cpu_ops_steps of every cpu_ops_every_steps."""
        return bool(self.config.record_cpu_ops) and step % self._ops_every < self._ops_steps

    def _start_device_capture(self, cpu_ops: bool) -> None:
        c = self.config
        if "torch" in sys.modules and (cpu_ops or c.device_activity):
            window = KinetoWindow(cpu_ops, c.device_activity, c.record_shapes)
            self._kineto = window if window.active else None
        if "tensorflow" in sys.modules and c.device_activity and self._tf_logdir is None:
            try:  # best effort: TensorBoard profile data next to our files
                import tensorflow as tf

                self._tf_logdir = str(self.rank_dir() / "tf")
                self._tf_start_ns = now_ns()
                tf.profiler.experimental.start(self._tf_logdir)
            except Exception as exc:  # noqa: BLE001
                log.info("profiler: tf.profiler not started (%s)", exc)
                self._tf_logdir = None

    def _stop_tf(self) -> None:
        """Stop tf.profiler and add its device activity to the artifact (as one more trace file of this rank)."""
        if self._tf_logdir is None:
            return
        logdir, self._tf_logdir = Path(self._tf_logdir), None
        try:
            import tensorflow as tf

            tf.profiler.experimental.stop()
            from sagelaunch.profiler.tf_capture import read_tf_session  # lazy: a TensorFlow job's stop only: it loads the trace reader (msgspec), which a PyTorch job's training process never does

            rank = read_tf_session(logdir, self._tf_start_ns, self._meta())
            if rank is not None and len(rank) and self._writer is not None and not self.failed:
                self._writer.submit(self.rank_dir(), rank.meta, rank, None)
        except Exception as exc:  # noqa: BLE001 — TensorBoard's data stays in rank-N/tf whatever happens here
            log.info("profiler: tf.profiler data not converted (%s)", exc)

    def _start_monitor_if_alone(self) -> None:
        """Outside a local sagelaunch job (no sidecar), local rank 0 of each host samples utilisation in a thread."""
        local_rank = int(os.environ.get("LOCAL_RANK", self.config.rank) or 0)
        if os.environ.get("SAGELAUNCH_PROFILER_CONFIG") or local_rank != 0:
            return
        monitor = SystemMonitor(
            Path(self.config.output_dir), self.config.host, self.config.system_monitor_interval_millis,
            self.config.file_rotation_secs, self._output,
        )
        self._monitor = monitor
        monitor.start_thread()

    # --- windows ------------------------------------------------------------------------------
    def _meta(self) -> TraceMeta:
        c = self.config
        ws = os.environ.get("WORLD_SIZE")
        return TraceMeta(rank=c.rank, host=c.host, kind="sagelaunch", world_size=int(ws) if ws else None,
                         job_settings=from_environment())

    def _flush(self, restart: bool) -> None:
        """End the window: stop Kineto here (its buffers are this thread's), convert and write in the writer."""
        meta = self._meta()
        spans = self._recorder.drain(meta)
        finished = None
        if self._kineto is not None:
            finished = self._end_kineto()
        if self.config.record_cpu_ops:  # the file says when operators were recorded (none: an empty list)
            meta.cpu_ops = {"steps": self._ops_steps, "every_steps": self._ops_every, "recorded_ns": self._ops_windows}
        self._ops_windows = []
        if restart:
            self._start_device_capture(self._ops_phase(self._step))
        self._steps_in_window = 0
        if self._writer is not None:
            self._writer.submit(self.rank_dir(), meta, spans, finished)

    def _end_kineto(self) -> "FinishedWindow | None":
        window, self._kineto = self._kineto, None
        if window is None:
            return None
        finished = window.finish()
        if window.records_cpu_ops:
            self._ops_windows.append([window.started_ns, window.stopped_ns])
        return finished

    def _step_ended(self, end: int) -> None:
        """An outermost annotation ended: the duty cycle may switch CPU operators on or off here, between steps."""
        self._step += 1
        self._steps_in_window += 1  # windows with Kineto rotate by steps too: its memory grows per event
        recording = self._kineto is not None and self._kineto.records_cpu_ops
        if self._ops_phase(self._step) == recording:
            if self._kineto is not None and self._steps_in_window >= self._rotation_steps:
                self._tick(end, rotate=True)
            return
        try:
            if recording or self._kineto is not None:
                self._window_end_ns = end + int(self.config.file_rotation_secs) * 1_000_000_000
                self._flush(restart=True)  # operators end (or device-only capture changes to CPU + device)
            else:
                self._start_device_capture(True)  # no Kineto between cycles: its events join this window
                self._steps_in_window = 0  # SMPFileRotationSteps bounds Kineto's memory: counted from here
        except Exception:  # noqa: BLE001
            self._fail("CPU operator duty cycle")

    def _tick(self, now: int, rotate: bool = False) -> None:
        """Called at annotation ends: honour CPUProfilingDuration, SMPFileRotationSecs and SMPFileRotationSteps."""
        if now >= self._deadline_ns:
            log.info("profiler: CPUProfilingDuration reached; stopping detailed profiling")
            self.stop_profiling()
        elif now >= self._window_end_ns or rotate:
            self._window_end_ns = now + int(self.config.file_rotation_secs) * 1_000_000_000
            try:
                self._flush(restart=True)
            except Exception:  # noqa: BLE001
                self._fail("file rotation")

    def _fail(self, where: str) -> None:
        log.exception("profiler: %s failed; profiling stops, training goes on", where)
        self.failed = True
        self.active = False
        self._stop_window_quietly()
        self._remove_torch_hooks()

    def _writer_failed(self) -> None:
        """Called by the writer thread (it logged why): profiling stops; the training thread ends Kineto."""
        self.failed = True
        self.active = False

    def _stop_window_quietly(self) -> None:
        if self._kineto is not None:
            try:
                self._kineto.finish()
            except Exception:  # noqa: BLE001
                pass
            self._kineto = None
        self._ops_windows = []

    # --- annotations --------------------------------------------------------------------------
    def annotation_begin(self, name: str, step: bool = True) -> _Handle | None:
        """``step=False``: a library's span (jobspec.library_marks), never a step even when outermost."""
        if not self.active:
            return None
        rf = None
        if self._kineto is not None and self._kineto.records_cpu_ops:
            try:  # inside Kineto's CPU capture the annotation is Kineto's own (it also marks GPU work)
                import torch

                rf = torch.autograd.profiler.record_function(str(name))
                rf.__enter__()
            except Exception:  # noqa: BLE001
                rf = None
        self._depth += int(step)
        return _Handle(str(name), now_ns(), rf, step)

    def annotation_end(self, handle: _Handle | None) -> None:
        if handle is None or not self.active:
            if self.failed and self._kineto is not None:
                self._stop_window_quietly()
            return
        end = now_ns()
        self._depth -= int(handle.step)
        if handle.rf is not None:
            try:
                handle.rf.__exit__(None, None, None)
            except Exception:  # noqa: BLE001
                pass
        else:
            self._recorder.add(handle.name, handle.start, end)
        if self._depth <= 0 and handle.step:
            self._depth = 0
            if self._hooks is not None and not self._hooks.optimizer_steps:  # no optimizer: sample at steps
                self._hooks.sample_memory(end)
            self._step_ended(end)
            if not self.active:
                return
        if end >= self._window_end_ns or end >= self._deadline_ns:
            self._tick(end)
        elif len(self._recorder.spans) >= MAX_SPANS_PER_WINDOW:
            self._tick(end, rotate=True)

    def annotate(self, name: str) -> "_Annotate":
        return _Annotate(self, name)


class _Annotate:
    """`with annotate("x"):` and `@annotate("x")`."""

    def __init__(self, prof: SMProfiler, name: str) -> None:
        self.prof, self.name = prof, name
        self._handles: list[_Handle | None] = []

    def __enter__(self):
        self._handles.append(self.prof.annotation_begin(self.name))
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.prof.annotation_end(self._handles.pop() if self._handles else None)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            handle = self.prof.annotation_begin(self.name)
            try:
                return fn(*args, **kwargs)
            finally:
                self.prof.annotation_end(handle)

        return wrapper


def _forget_in_child() -> None:
    """A forked child (a DataLoader worker) is not the profiled process: its copy of the session records nothing and
    never reaches the parent's writer thread (gone in the child) or output process (a second writer on its pipe)."""
    SMProfiler._lock = threading.Lock()  # another thread may have held it at the fork
    prof = SMProfiler._instance
    if prof is not None:
        prof.active = False
        prof._kineto = prof._writer = prof._output = prof._monitor = prof._tf_logdir = prof._hooks = None
        prof._recorder = AnnotationRecorder()
        prof.files = []


if hasattr(os, "register_at_fork"):  # POSIX; where there is no fork there is nothing to forget
    os.register_at_fork(after_in_child=_forget_in_child)


def configure(config: Config | None = None) -> None:
    SMProfiler.instance().configure(config)


def start_profiling() -> None:
    SMProfiler.instance().start_profiling()


def stop_profiling() -> None:
    SMProfiler.instance().stop_profiling()


def annotate(name: str) -> _Annotate:
    return SMProfiler.instance().annotate(name)


def annotation_begin(name: str):
    return SMProfiler.instance().annotation_begin(name)


def annotation_end(handle) -> None:
    SMProfiler.instance().annotation_end(handle)


# sagelaunch's own libraries (modelparallel's pipeline receives) mark their spans through jobspec, not through us
library_marks.register(lambda name: SMProfiler.instance().annotation_begin(name, step=False), annotation_end)
