"""A busy host: other processes take the CPU the training loop needs, and its steps slow down together. Told from the
host's own CPU samples (the system monitor's per-core utilisation: every core busy) and from the slow steps' shape: a
step slowed by the host is slower everywhere (every annotated phase at once, or unannotated time such as a sleep
that overshoots), where a step slowed by the user's code is slower in one phase (an optimizer step, a checkpoint).
step_outlier leaves these steps out: what it reports is time lost in the user's control.

Cannot see: which processes the others are (the samples are host-wide); a rank whose own threads fill every core
(intra-op threads, DataLoader workers, the profiler's output process) reads as a busy host when its steps also
slow down irregularly; ranks are matched to hosts only when the profile has one host or names the host in the
rank's path."""

from __future__ import annotations

import numpy as np

from sagelaunch.profiler.figures import ms
from sagelaunch.profiler.findings import thresholds as T
from sagelaunch.profiler.findings.common import finding, median, ranks_of
from sagelaunch.profiler.findings.slow_steps import periodic_steps, slow_steps
from sagelaunch.profiler.records import AnalysisResult, Evidence, Finding, HostSummary, Loop


def saturated_share(h: HostSummary, own_processes: int = 1) -> float | None:
    """The share of the host's CPU samples in which every core was at least HOST_BUSY_CORE_PCT busy; None when the
    job's own processes (its ranks there) are as many as the cores: they alone may keep every core busy."""
    m = h.metrics.get("cpu_util")
    if not m:
        return None
    cores = [s.value for k, s in m.series.items() if k != "all"] or [m.series["all"].value]
    if len(cores) <= own_processes:
        return None
    n = min(len(v) for v in cores)
    if n < T.HOST_MIN_SAMPLES:
        return None  # a second of samples cannot say the host was busy through the run
    busy = np.all(np.asarray([v[:n] for v in cores]) >= T.HOST_BUSY_CORE_PCT, axis=0)
    return float(busy.mean())


def host_of(a: AnalysisResult, rank: str) -> str | None:
    if len(a.hosts) == 1:
        return next(iter(a.hosts))
    source = a.ranks[rank].source
    return next((h for h in a.hosts if f"/{h}/" in source), None)


def _ranks_on(a: AnalysisResult, host: str | None) -> int:
    return sum(host_of(a, rank) == host for rank in a.ranks)


def contended_steps(a: AnalysisResult, rank: str, loop: Loop, slow: np.ndarray, excess: np.ndarray) -> np.ndarray:
    """Which judged slow steps a busy host explains (not those that recur with a period: the user's code): every
    annotated phase slower at once; or, on a host whose cores were all busy most of the run, any irregular slow step
    (another process's time slice lands in whichever phase runs, so the phase does not tell)."""
    host = host_of(a, rank)
    h = a.hosts.get(host) if host else None
    busy = h is not None and (saturated_share(h, _ranks_on(a, host)) or 0.0) >= T.HOST_SATURATED_SAMPLES
    mask = np.asarray(loop.judged_mask, dtype=bool)
    phases = {p: np.asarray(v, dtype=np.float64)[mask] for p, v in (loop.phase_us or {}).items()}
    medians = {p: median(v.tolist()) for p, v in phases.items()}
    everywhere = np.zeros(len(slow), dtype=bool)
    if len(phases) >= 2 and all(m > 0 for m in medians.values()):
        everywhere = np.all([phases[p] >= T.HOST_ALL_PHASES_RATIO * medians[p] for p in phases], axis=0)
    if (everywhere & slow).sum() < T.HOST_ALL_PHASES_MIN_STEPS:
        everywhere[:] = False  # a single step slower everywhere (a pause) is no pattern of a busy host
    numbers = np.asarray(loop.step)[mask]
    return slow & ~periodic_steps(numbers, slow, excess) & (everywhere | busy)


def host_contention(a: AnalysisResult) -> list[Finding]:
    lost_by_host: dict[str | None, dict[str, tuple[float, float, int]]] = {}
    for rank, r in ranks_of(a):
        loop = r.loop
        found = slow_steps(loop) if loop else None
        if loop is None or found is None or not found[2].any():
            continue
        cycles, _, slow, excess = found
        contended = contended_steps(a, rank, loop, slow, excess)
        lost = float(excess[contended].sum())
        total = float(cycles.sum())
        if lost >= T.STEP_OUTLIER_MIN_LOST_US and total and lost / total >= T.HOST_CONTENTION_LOST_SHARE:
            lost_by_host.setdefault(host_of(a, rank), {})[rank] = (lost, lost / total, int(contended.sum()))
    out = []
    for host, ranks in lost_by_host.items():
        worst = max(ranks, key=lambda k: ranks[k][1])
        lost, share, steps = ranks[worst]
        h = a.hosts.get(host) if host else None
        sat = saturated_share(h, _ranks_on(a, host)) if h else None
        evidence: dict[str, Evidence] = {"host": host or "unknown", "ranks": len(ranks), "worst_rank": worst,
                                         "slow_steps": steps, "time_lost_ms": round(lost / 1e3, 3),
                                         "time_lost_share": round(share, 3),
                                         "time_lost_share_by_rank": {k: round(v[1], 3) for k, v in ranks.items()}}
        if sat is not None:
            evidence["samples_with_every_core_busy_share"] = round(sat, 3)
        seen = (f"every core was busy in {100 * sat:.0f}% of the host's CPU samples" if sat is not None else
                "the slow steps are slower in every phase at once")
        out.append(finding(
            "host_contention", "medium" if share >= T.HOST_CONTENTION_LOST_SHARE_MEDIUM else "low",
            f"The host is busy with other work: {seen}, and {steps} irregular slow steps lose {ms(lost)} "
            f"({100 * share:.0f}% of rank {worst}'s time) — not the training code.",
            evidence,
            "Run the job where nothing else competes for the CPU: a dedicated instance or container with its own cores "
            "(docker --cpuset-cpus, taskset), stop other jobs on the host, and keep torch.set_num_threads() and "
            "DataLoader num_workers within the cores the job has; profile again before changing the code.",
            None))
    return out
