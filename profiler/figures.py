"""The headline figures of an analysis, each with a label that says what it measures and over which window.

One function formats every figure; `profile analyze` (text and --json), the report and the profile browser print
these strings as they are, so the same quantity reads the same everywhere (tests/profiler/test_one_source.py).
"""

from __future__ import annotations

from sagelaunch.profiler.records import AnalysisResult, Figure, HostSummary, RankAnalysis

ANNOTATIONS_SHOWN = 5


def ms(us: float) -> str:
    return f"{us / 1e3:,.1f} ms" if abs(us) >= 100 else f"{us / 1e3:,.3f} ms"


def plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def pct(part: float, whole: float) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "0.0%"


def _rank_figures(out: list[Figure], rank: str, r: RankAnalysis) -> None:
    def add(key: str, label: str, value: float, unit: str, text: str) -> None:
        out.append(Figure(rank=rank, key=key, label=label, value=value, unit=unit, text=text))

    t = r.temporal
    if t:
        span = t.span_us
        add("gpu_span", "GPU span (first to last GPU activity)", span, "us", ms(span))
        add("gpu_idle", "GPU idle within the GPU span", t.idle_us, "us", f"{ms(t.idle_us)} ({pct(t.idle_us, span)})")
        add("gpu_compute", "GPU computing within the GPU span (compute kernels, overlaps counted once)",
            t.compute_us, "us", f"{ms(t.compute_us)} ({pct(t.compute_us, span)})")
    k = r.kernels
    if k.count:
        add("kernel_time", "Kernel time, summed over kernels (exceeds the GPU span when kernels on several streams overlap)",
            k.total_us, "us", f"{ms(k.total_us)} in {plural(k.count, 'kernel')} ({k.distinct:,} distinct)")
    launch = r.launch
    delay = launch.mean_launch_delay_us  # None exactly when no launch was matched to its kernel (count 0)
    if delay is not None:
        add("launch_delay", "Mean wait from the end of a kernel launch call to the kernel's start",
            delay, "us", f"{ms(delay)} over {launch.count:,} launches")
    ib = r.idle_breakdown
    if ib:
        gaps = ib.total_us
        add("idle_breakdown",
            "GPU idle gaps by cause, summed over streams (HTA: host wait = launched late, kernel wait = gaps under "
            "30 µs, other = synchronisation, other streams)", ib.host_wait_us, "us",
            f"host wait {ms(ib.host_wait_us)} ({pct(ib.host_wait_us, gaps)}), kernel wait "
            f"{ms(ib.kernel_wait_us)} ({pct(ib.kernel_wait_us, gaps)}), other {ms(ib.other_us)} "
            f"({pct(ib.other_us, gaps)})")
    queue = launch.queue
    if queue:
        add("queue_length", "Kernels queued on a stream, launched and not started (HTA's queue length)",
            queue.mean, "kernels", f"mean {queue.mean:.1f}, max {queue.max:,}")
    overlap = r.overlap
    if overlap:
        add("comm_comp_overlap", "Communication time with computation alongside (HTA's overlap)",
            overlap.comp_comm_overlap_pct, "%",
            f"{overlap.comp_comm_overlap_pct:.1f}% of {ms(overlap.communication_us)}")
    loop = r.loop
    if loop and loop.judged:
        m = loop.mean_us
        add("step_cycle", f"Step cycle, start to next start (steps from {loop.source}; warm-up left out)", m.cycle, "us",
            f"{plural(loop.judged, 'step')}, mean {ms(m.cycle)}"
            + (f", DataLoader {ms(m.input)} ({pct(m.input, m.cycle)})" if loop.input_source else ""))
    for name, series in r.memory.items():
        b = series.bytes
        add("memory:" + name, f"Process memory, {name.replace('_', ' ')} (first → last sample, peak)",
            max(b), "bytes", f"{b[0] / 2**20:,.0f} → {b[-1] / 2**20:,.0f} MiB, peak {max(b) / 2**20:,.0f} MiB")
    s = r.steps
    if s:
        add("step_time", "Step time (host-side step annotations)", s.mean_us, "us",
            f"{plural(s.count, 'step')}, mean {ms(s.mean_us)}, p50 {ms(s.p50_us)}, max {ms(s.max_us)}")
    cpu = r.cpu
    if cpu:
        add("cpu_busy_trace", "CPU busy in the trace (time any profiled thread ran an operator, over the trace's CPU span; annotations are not work)",
            cpu.active_us, "us", f"{ms(cpu.active_us)} of {ms(cpu.span_us)} ({pct(cpu.active_us, cpu.span_us)})")
    sampled = r.cpu_ops_sampled
    if sampled:
        add("cpu_ops_sampled", f"Framework operators recorded in {sampled.steps} of every {sampled.every_steps} steps "
            "(operator figures cover those steps only)", sampled.recorded_steps, "steps",
            f"{plural(sampled.recorded_steps, 'step')} of {sampled.total_steps:,} in {plural(sampled.windows, 'window')}")
    for a in r.annotations[:ANNOTATIONS_SHOWN]:
        where = "GPU-side spans" if a.side == "GPU" else "CPU-side spans"
        add("annotation:" + a.name, f"Annotation {a.name} ({where})", a.p50_us, "us",
            f"{plural(a.count, 'span')}, p50 {ms(a.p50_us)}, total {ms(a.total_us)}")


SAMPLED = {
    "cpu_util": "CPU utilisation, sampled (mean of all cores over the whole run)",
    "gpu_util": "GPU utilisation, sampled by NVML (mean of the node's GPUs over the whole run)",
    "gpu_mem_util": "GPU memory bandwidth use, sampled by NVML (mean over the whole run)",
    "host_mem_util": "Host memory used, sampled (mean over the whole run)",
}


def _host_figures(out: list[Figure], host: str, h: HostSummary) -> None:
    for metric, label in SAMPLED.items():
        m = h.metrics.get(metric)
        if not m:
            continue
        # the host's whole-machine sample when recorded, else the mean of its cores / GPUs
        mean = m.series["all"].mean if "all" in m.series else m.mean
        out.append(Figure(host=host, key=metric, label=label, value=mean, unit="%", text=f"{mean:.1f}%"))


def figures(result: AnalysisResult) -> list[Figure]:
    out: list[Figure] = []
    for rank, r in result.ranks.items():
        _rank_figures(out, rank, r)
    for host, h in result.hosts.items():
        _host_figures(out, host, h)
    return out
