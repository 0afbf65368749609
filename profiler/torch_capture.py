"""Kineto (torch.profiler) capture for one window; torch is imported when a window starts (api.py starts one only
when the script already imported torch).

A window ends at stop_profiling(), file rotation (by seconds or by steps) or the end of the steps whose CPU
operators are recorded (Config.cpu_ops_steps of every cpu_ops_every_steps): the training thread stops the profiler;
the writer thread (profiler/window_writer.py) lets torch export its Chrome trace to a temporary file, which the
output process (profiler/output_serve.py) reads with our own fast reader and writes as Parquet.
"""

from __future__ import annotations

import os
import tempfile

from sagelaunch.profiler.recorder import now_ns


def gpu_available(torch) -> bool:
    try:
        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 — a broken CUDA setup means: no device activity
        return False


class KinetoWindow:
    """One torch.profiler session (start → stop → Chrome export)."""

    def __init__(self, record_cpu_ops: bool, device_activity: bool, record_shapes: bool) -> None:
        import torch

        acts = []
        if record_cpu_ops:
            acts.append(torch.profiler.ProfilerActivity.CPU)
        if device_activity and gpu_available(torch):
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        self.activities = acts
        self.records_cpu_ops = record_cpu_ops
        self._prof = None
        self.started_ns = self.stopped_ns = 0  # when Kineto recorded (epoch ns), for the file's metadata
        if acts:
            self._prof = torch.profiler.profile(activities=acts, record_shapes=record_shapes)
            self._prof.start()
            self.started_ns = now_ns()

    @property
    def active(self) -> bool:
        return self._prof is not None

    def finish(self) -> "FinishedWindow | None":
        """Stop recording (on the thread that started it); the conversion is FinishedWindow.convert's."""
        if self._prof is None:
            return None
        prof, self._prof = self._prof, None
        self.stopped_ns = now_ns()
        prof.stop()
        return FinishedWindow(prof)


def _release(prof) -> None:
    """Drop Kineto's results of a stopped session. The profile object sits in reference cycles, so deleting it
    frees nothing until a full gc.collect(), which costs ~0.15 s per window in a process holding torch's objects
    (it was the largest per-window cost); cutting the references to the results frees them at once."""
    inner = getattr(prof, "profiler", None)
    for name in ("kineto_results", "_function_events", "_old_function_events"):
        if inner is not None and hasattr(inner, name):
            setattr(inner, name, None)
    prof.profiler = None


class FinishedWindow:
    """A stopped torch.profiler session waiting to be exported (on the writer thread)."""

    def __init__(self, prof) -> None:
        self._prof = prof

    def discard(self) -> None:
        self._prof = None

    def export(self) -> str | None:
        """Let torch export the window as Chrome JSON (its own C++ export, so that Kineto's semantics — correlation
        ids, streams, External ids — are exactly those of any torch.profiler trace) into a temporary file whose path
        is returned; the caller removes it. Torch's copy of the window is freed first."""
        if self._prof is None:
            return None
        prof, self._prof = self._prof, None
        fd, tmp = tempfile.mkstemp(suffix=".json", prefix="sagelaunch-kineto-")
        os.close(fd)
        try:
            prof.export_chrome_trace(tmp)
        except BaseException:
            os.unlink(tmp)
            raise
        finally:
            _release(prof)  # the peak is one copy of the window, not two
        return tmp
