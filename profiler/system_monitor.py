"""CPU utilisation per core (psutil) and GPU utilisation/memory per device (NVML) sampled into the COUNTERS table.

Rows accumulate in memory and are written to ``<out>/<host>/system-<seq>.parquet``: the current window's file is
rewritten (atomically) every FLUSH_SECONDS so a killed monitor loses little, and a new file starts every
SMPFileRotationSecs.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from sagelaunch.jobspec.contract import DEFAULT_FILE_ROTATION_S
from sagelaunch.jobspec.profiling import FILE_ROTATION, seconds_param
from sagelaunch.profiler.output_process import ProfileOutput
from sagelaunch.profiler.schema import (
    METRIC_CPU_UTIL,
    METRIC_GPU_MEM_USED,
    METRIC_GPU_MEM_UTIL,
    METRIC_GPU_UTIL,
    METRIC_HOST_MEM_UTIL,
)
from sagelaunch.profiler.settings import DEFAULT_INTERVAL_MS, current_host, read_profiler_config

if TYPE_CHECKING:
    from sagelaunch.profiler.monitor import SignalFlag

log = logging.getLogger("sagelaunch.profiler")
FLUSH_SECONDS = 10.0


class _Nvml:
    """NVML through nvidia-ml-py, when a driver and GPUs exist; otherwise no samples."""

    def __init__(self) -> None:
        self.handles = []
        try:
            import pynvml

            pynvml.nvmlInit()
            self.pynvml = pynvml
            self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
        except Exception:  # noqa: BLE001 — no NVML library / driver / GPU: CPU-only host
            self.handles = []

    def sample(self, ts: int, rows: list) -> None:
        for i, h in enumerate(self.handles):
            try:
                util = self.pynvml.nvmlDeviceGetUtilizationRates(h)
                mem = self.pynvml.nvmlDeviceGetMemoryInfo(h)
            except Exception:  # noqa: BLE001
                continue
            rows.append((ts, METRIC_GPU_UTIL, i, float(util.gpu)))
            rows.append((ts, METRIC_GPU_MEM_UTIL, i, float(util.memory)))
            rows.append((ts, METRIC_GPU_MEM_USED, i, float(mem.used)))


class SystemMonitor:
    def __init__(self, out_dir: Path, host: str, interval_ms: int, rotation_s: int, output=None,
                 stop: threading.Event | SignalFlag | None = None) -> None:
        self._output = output or ProfileOutput(use_process=False)  # the profiler's helper, or this process
        self.dir = Path(out_dir) / host
        self.host = host
        self.interval = max(int(interval_ms), 10) / 1000.0
        self.rotation = max(int(rotation_s), 1)
        self.rows: list[tuple[int, str, int, float]] = []
        self._stop = stop or threading.Event()  # the sidecar's, set by its signal handlers before this exists
        self._thread: threading.Thread | None = None
        self._seq = 0
        while (self.dir / f"system-{self._seq:04d}.parquet").exists():  # a restarted monitor appends
            self._seq += 1
        self.files: list[Path] = []

    def sample_once(self) -> None:
        import psutil

        ts = time.time_ns()
        for core, pct in enumerate(psutil.cpu_percent(percpu=True)):
            self.rows.append((ts, METRIC_CPU_UTIL, core, float(pct)))
        self.rows.append((ts, METRIC_HOST_MEM_UTIL, -1, float(psutil.virtual_memory().percent)))
        self._nvml.sample(ts, self.rows)

    def write(self) -> Path | None:
        if not self.rows:
            return None
        path = self._output.write_counter_rows(self.dir / f"system-{self._seq:04d}.parquet", self.host,
                                               int(self.interval * 1000), self.rows)
        if path not in self.files:
            self.files.append(path)
        return path

    def run(self) -> None:
        import psutil

        self._nvml = _Nvml()
        psutil.cpu_percent(percpu=True)  # the first call only sets the baseline
        window_start = last_flush = time.monotonic()
        while not self._stop.wait(self.interval):
            try:
                self.sample_once()
                now = time.monotonic()
                if now - window_start >= self.rotation:
                    self.write()
                    self.rows, self._seq, window_start, last_flush = [], self._seq + 1, now, now
                elif now - last_flush >= FLUSH_SECONDS:
                    self.write()
                    last_flush = now
            except Exception:  # noqa: BLE001 — never take the job down; stop sampling
                log.exception("profiler: system monitor failed; it stops")
                break
        try:
            self.sample_once()  # the utilisation since the last sample: short runs get at least one
            self.write()
        except Exception:  # noqa: BLE001
            log.exception("profiler: system monitor could not write its last samples")

    def start_thread(self) -> None:
        self._thread = threading.Thread(target=self.run, name="sagelaunch-system-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)


def run_sidecar(config: Path | None, out: Path, host: str | None, interval_ms: int | None, stop: SignalFlag) -> int:
    """The monitor sidecar's run (profiler/monitor.py, once its signal handlers are in place): the job's profiler
    configuration read, then samples until `stop`, written under <out>/<host>/. Returns the exit status."""
    cfg = read_profiler_config(config) if config else read_profiler_config()
    if cfg.get("DisableProfiler"):
        print("profiler monitor: DisableProfiler is set; not sampling", flush=True)
        return 0
    interval = interval_ms or int(cfg.get("ProfilingIntervalInMilliseconds") or DEFAULT_INTERVAL_MS)
    rotation = seconds_param(cfg.get("ProfilingParameters") or {}, FILE_ROTATION, DEFAULT_FILE_ROTATION_S, "config")
    monitor = SystemMonitor(out, host or current_host(), interval, rotation, stop=stop)
    print(f"profiler monitor: sampling every {interval} ms into {monitor.dir}", flush=True)
    monitor.run()
    print(f"profiler monitor: wrote {', '.join(str(f) for f in monitor.files) or 'nothing'}", flush=True)
    return 0
