"""The training loop's rules: input wait, slow steps, straggling ranks, memory growth. They read the ``loop`` and
``memory`` sections of each rank (profiler/analysis/loop.py): steps found with or without annotations, their cycles
(start to next start), the DataLoader's time in them and the process's own memory.

What they cannot see (documented rather than guessed):
- input_bound: input fetched without a DataLoader (indexing tensors by hand, a generator) is not told apart from
  compute (unexplained_step and straggler_rank see it as unannotated time); nor is a DataLoader whose workers keep
  up but whose batches are large to copy (that shows as Forward). On a busy host it judges the steps the host did
  not slow (host_rules.py).
- straggler_rank: ranks kept in step by a collective are compared by their own time per step (the cycle less
  Backward); without an annotated Backward they are not compared, and extra Backward compute on one rank looks like
  the others' all-reduce wait. Ranks are compared only when each has steps.
- step_outlier: slow steps spread without a period and losing < 10% of the time are left alone (a busy machine's
  noise looks the same); on a host the samples show busy, irregular slow steps are host_contention's. A warm-up
  longer than a tenth of a short run is judged as slow steps (a 60-step run of the 2-stage SMP pipeline on CPU
  warmed up over ~15 steps and read as outliers: the labelled case runs 240 steps).
- memory_growth: host-wide memory (other processes) is not judged; memory that grows then plateaus within the
  last quarter still reads as growth.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sagelaunch.profiler.figures import ms
from sagelaunch.profiler.nputil import percentile
from sagelaunch.profiler.findings import thresholds as T
from sagelaunch.profiler.findings.common import finding, median, ranks_of
from sagelaunch.profiler.findings.host_rules import contended_steps
from sagelaunch.profiler.findings.slow_steps import judged, periodic, slow_steps
from sagelaunch.profiler.records import AnalysisResult, Evidence, Finding, Loop


def _calm_input(a: AnalysisResult, rank: str, loop: Loop) -> tuple[float, float] | None:
    """The input's share of the steps a busy host did not slow (host_rules.contended_steps) and its mean µs there;
    None when it slowed none or the input was measured over some steps only (a duty cycle)."""
    found = slow_steps(loop)
    if found is None or loop.input_steps != loop.judged:
        return None
    cycles, _, slow, excess = found
    contended = contended_steps(a, rank, loop, slow, excess)
    if not contended.any():
        return None
    inputs = judged(loop.input_us, loop)[~contended]
    total = float(cycles[~contended].sum())
    return (float(inputs.sum()) / total, float(inputs.mean())) if total else None


def input_bound(a: AnalysisResult) -> list[Finding]:
    out = []
    for rank, r in ranks_of(a):
        loop = r.loop
        if not loop or not loop.input_source or not loop.judged:
            continue
        m = loop.mean_us
        share = m.input / m.input_cycle if m.input_cycle else 0.0
        per_step = m.input
        calm = _calm_input(a, rank, loop)
        if calm is not None:  # a busy host stretched some steps (the DataLoader's with them): judge the others
            share, per_step = calm
        if share < T.INPUT_WAIT_SHARE or per_step < T.INPUT_WAIT_MIN_US:
            continue
        between = m.input_between_steps >= m.input_inside_steps
        where = ("between steps (the batch is fetched before the step annotation opens)" if between and
                 loop.source == "step annotations" else "between optimizer steps" if between else "inside the steps")
        out.append(finding(
            "input_bound", "high" if share >= T.INPUT_WAIT_SHARE_HIGH else "medium",
            f"Steps wait for input data: the DataLoader takes {100 * share:.0f}% of each step "
            f"({ms(m.input)} of {ms(m.input_cycle)}), {where.split(' (')[0]}.",
            {"steps": loop.input_steps, "step_cycle_ms": round(m.input_cycle / 1e3, 3),
             "input_wait_ms_per_step": round(m.input / 1e3, 3), "input_wait_share": round(share, 3),
             "between_steps_ms": round(m.input_between_steps / 1e3, 3),
             "inside_steps_ms": round(m.input_inside_steps / 1e3, 3), "measured_by": loop.input_source,
             "steps_from": loop.source,
             **({"steps_measured": f"{loop.input_steps} of {loop.count} steps (those with framework operators "
                                   "recorded)"} if loop.input_steps != loop.judged else {})},
            f"The DataLoader's __next__ costs {ms(m.input)} a step, {where}: load batches in parallel with "
            "DataLoader(num_workers=4, pin_memory=True, persistent_workers=True, prefetch_factor=4) — with the Hugging "
            "Face Trainer, TrainingArguments(dataloader_num_workers=4, dataloader_persistent_workers=True); move "
            "decoding/tokenisation out of Dataset.__getitem__ (pre-process once).",
            rank))
    return out


def step_outlier(a: AnalysisResult) -> list[Finding]:
    out = []
    for rank, r in ranks_of(a):
        loop = r.loop
        found_slow = slow_steps(loop) if loop else None
        if loop is None or found_slow is None or not found_slow[2].any():
            continue
        cycles, numbers, slow, excess = found_slow
        total = float(cycles.sum())
        found = periodic(numbers, slow, excess)
        period, big = found if found else (None, slow)
        # irregular slow steps of a busy host (host_contention) are not the user's to fix: judged without them
        contended = contended_steps(a, rank, loop, slow, excess) & ~(big if period else np.zeros_like(big))
        big = big & ~contended
        if not big.any():
            continue
        lost = float(excess[big].sum())
        share = lost / total if total else 0.0
        if lost < T.STEP_OUTLIER_MIN_LOST_US or share < (T.STEP_OUTLIER_LOST_SHARE_PERIODIC if period else
                                                         T.STEP_OUTLIER_LOST_SHARE):
            continue
        worst = int(np.argmax(np.where(big, excess, -1.0)))
        big_excess = float(excess[big].mean())
        evidence: dict[str, Evidence] = {
            "steps": int(len(cycles)), "slow_steps": int(big.sum()), "time_lost_ms": round(lost / 1e3, 3),
            "time_lost_share": round(share, 3), "median_step_ms": round(percentile(cycles, 50) / 1e3, 3),
            "slowest_step": int(numbers[worst]), "slowest_step_ms": round(float(cycles[worst]) / 1e3, 3),
            "slow_step_numbers": ", ".join(str(n) for n in numbers[big][:10].tolist()),
            "left_out_warmup_steps": loop.warmup_steps}
        if loop.slowed_by_profiler:
            evidence["left_out_steps_slowed_by_the_profiler"] = loop.slowed_by_profiler
        if contended.any():
            evidence["left_out_steps_of_a_busy_host"] = int(contended.sum())
        if period:
            evidence["period_steps"] = period
            summary = (f"Every {period} steps, +{ms(big_excess)}: {int(big.sum())} slow steps lose {ms(lost)} "
                       f"({100 * share:.0f}% of the time) — checkpointing, evaluation or logging?")
            fix = (f"Something runs every {period} steps (steps {evidence['slow_step_numbers']}): if it is a checkpoint, "
                   f"save less often or asynchronously (TrainingArguments(save_steps=…) above {period}, "
                   "torch.distributed.checkpoint.async_save); evaluation: raise eval_steps; logging: raise "
                   "logging_steps and avoid .item()/synchronisation in it. Open the timeline at step "
                   f"{evidence['slowest_step']}.")
        else:
            summary = (f"{int(big.sum())} of {len(cycles)} steps take ≥{T.STEP_OUTLIER_RATIO}× their neighbours and "
                       f"lose {ms(lost)} ({100 * share:.0f}% of the time); the slowest, step {evidence['slowest_step']}, "
                       f"takes {ms(float(cycles[worst]))}.")
            fix = (f"Open the timeline at step {evidence['slowest_step']} to see what runs there; irregular slow steps "
                   "are usually garbage collection (gc.freeze() after setup), DataLoader workers restarting at epoch "
                   "starts (persistent_workers=True) or other processes on the host.")
        out.append(finding("step_outlier", "high" if share >= T.STEP_OUTLIER_LOST_SHARE_HIGH else "medium",
                           summary, evidence, fix, rank))
    return out


def straggler_rank(a: AnalysisResult) -> list[Finding]:
    loops = {rank: r.loop for rank, r in ranks_of(a) if r.loop and r.loop.judged}
    out: list[Finding] = []
    if len(loops) >= 2:
        cycles = {rank: lp.mean_us.cycle for rank, lp in loops.items()}
        for rank, lp in loops.items():
            others = [v for k, v in cycles.items() if k != rank]
            m = median(others)
            if m and cycles[rank] >= T.STRAGGLER_STEP_RATIO * m:
                out.append(finding(
                    "straggler_rank", "high",
                    f"Rank {rank} is slower than the others: its steps take {ms(cycles[rank])} against a median of "
                    f"{ms(m)} ({cycles[rank] / m:.2f}×).",
                    {"rank_step_ms": round(cycles[rank] / 1e3, 3), "median_other_ranks_step_ms": round(m / 1e3, 3),
                     "ratio": round(cycles[rank] / m, 3), "ranks": len(cycles)},
                    "Give every rank the same work: shard the dataset evenly (DistributedSampler(drop_last=True)), "
                    "group samples by length (TrainingArguments(group_by_length=True)), and check the slow rank's host.",
                    rank))
        if not out:
            out = _synchronised_straggler(loops)
    seen = {f.rank for f in out}
    idles = {rank: s for rank, r in ranks_of(a) if (s := r.idle_share) is not None}
    for rank, idle in idles.items():
        others = [v for k, v in idles.items() if k != rank]
        if others and 100 * (idle - median(others)) >= T.STRAGGLER_IDLE_POINTS and rank not in seen:
            out.append(finding(
                "straggler_rank", "medium",
                f"Rank {rank}'s GPU is idle {100 * idle:.0f}% of its span against a median of {100 * median(others):.0f}% "
                "on the other ranks.",
                {"rank_gpu_idle_share": round(idle, 3), "median_other_ranks_idle_share": round(median(others), 3)},
                "Balance the ranks' work: DistributedSampler(drop_last=True), group_by_length=True, and the same "
                "DataLoader num_workers on every host; look at this rank's timeline for waits.", rank))
    return out


def _own_work(lp: Loop) -> dict[int, dict[str, float]] | None:
    """Per judged step (by number): the rank's own time — its whole cycle less Backward, where DDP's all-reduce waits
    for the slowest rank — split into input, Forward, Optimizer and the rest (unannotated time inside the step and
    between its annotations); None when Backward is not annotated."""
    phases = lp.phase_us or {}
    if "backward" not in phases:
        return None
    out = {}
    for i, n in enumerate(lp.step):
        if not lp.judged_mask[i]:
            continue
        own = lp.cycle_us[i] - phases["backward"][i]
        parts = {"input": lp.input_us[i], "forward": phases.get("forward", [0.0] * len(lp.step))[i],
                 "optimizer": phases.get("optimizer", [0.0] * len(lp.step))[i]}
        parts["other"] = own - sum(parts.values())
        out[int(n)] = {"own": own, **parts}
    return out


STRAGGLER_CAUSE = {"input": "input", "forward": "Forward compute", "optimizer": "Optimizer",
                   "other": "unannotated work (between its step annotations or outside the phases)"}
STRAGGLER_FIX = {
    "input": "Its DataLoader is slower than the other ranks': give it the same DataLoader(num_workers=…) and check "
             "its host's CPU and storage (other processes, a slower disk or network mount).",
    "forward": "Its Forward does more work than the other ranks': balance the batches (DistributedSampler(drop_last="
               "True), TrainingArguments(group_by_length=True) for variable lengths) and check its host and device.",
    "optimizer": "Its optimizer step is slower than the other ranks': check its host and device, and that every rank "
                 "holds the same parameters and optimizer settings.",
    "other": "It spends its time outside the annotated phases — building batches by hand (a generator, no "
             "DataLoader), logging or evaluation on this rank only: feed batches from a DataLoader(num_workers=…, "
             "sampler=DistributedSampler(...)) on every rank and keep rank-only work out of the step, or annotate it "
             "to see it.",
}


def _synchronised_straggler(loops: dict[str, Loop]) -> list[Finding]:
    """Ranks that wait for each other at a collective have equal cycles: the straggler is the rank whose own time
    (the whole cycle less Backward: input, Forward, Optimizer and the unannotated time between its step annotations)
    is longer in most steps, while the others wait longer inside Backward (where DDP's all-reduce waits). Judged by
    the time the others lose, not by a fixed share of the step."""
    work = {rank: w for rank, lp in loops.items() if (w := _own_work(lp)) is not None}
    out = []
    for rank, mine in work.items():
        others = {k: v for k, v in work.items() if k != rank}
        common = sorted(set(mine).intersection(*others.values())) if others else []
        if len(common) < T.STEP_OUTLIER_MIN_STEPS:
            continue
        diff = {part: np.array([mine[n][part] - median([o[n][part] for o in others.values()]) for n in common])
                for part in ("own", "input", "forward", "optimizer", "other")}
        excess, lp = float(diff["own"].mean()), loops[rank]
        cycle = lp.mean_us.cycle
        backward = lp.mean_us.backward or 0.0
        waits = median([loops[k].mean_us.backward or 0.0 for k in others]) - backward
        lost = max(0.0, min(excess, waits)) * len(common)  # the others' extra wait, over the steps compared
        consistent = float((diff["own"] > 0).mean())
        spread = float(diff["own"].std(ddof=1) / np.sqrt(len(common)))  # the mean excess's standard error
        if (excess <= T.STRAGGLER_MIN_STANDARD_ERRORS * spread or waits < T.STRAGGLER_WAIT_SHARE * excess
                or lost < T.STRAGGLER_MIN_LOST_US):
            continue  # noise between equal ranks, or the others do not wait for it, or too little time lost
        part = max(("input", "forward", "optimizer", "other"), key=lambda p: float(diff[p].mean()))
        cause = STRAGGLER_CAUSE[part]
        evidence: dict[str, Evidence] = {
            "rank_own_work_ms": round(float(np.mean([mine[n]["own"] for n in common])) / 1e3, 3),
            "excess_ms_per_step": round(excess / 1e3, 3), "step_cycle_ms": round(cycle / 1e3, 3), "cause": cause,
            "others_wait_longer_in_backward_ms": round(waits / 1e3, 3), "time_lost_ms": round(lost / 1e3, 3),
            "steps_compared": len(common), "steps_slower_than_the_others_share": round(consistent, 3),
            "excess_standard_errors": round(excess / spread, 1) if spread else None,
            "ranks": len(loops),
            **{f"excess_{p}_ms_per_step": round(float(diff[p].mean()) / 1e3, 3)
               for p in ("input", "forward", "optimizer", "other")}}
        out.append(finding(
            "straggler_rank", "high" if excess >= T.STRAGGLER_OWN_WORK_SHARE_HIGH * cycle else "medium",
            f"Rank {rank} holds the others up: its {cause} takes {ms(excess)} more per step than theirs "
            f"({100 * excess / cycle:.0f}% of a {ms(cycle)} step, in {100 * consistent:.0f}% of the steps), and the "
            f"others wait for it at the all-reduce: {ms(lost)} lost in all.",
            evidence, STRAGGLER_FIX[part], rank))
    return out


def _quarters(values: Sequence[float]) -> tuple[float, float] | None:
    n = len(values)
    if n < 8:
        return None
    q = n // 4
    return sum(values[:q]) / q, sum(values[-q:]) / q


def _grew(values: Sequence[float]) -> tuple[float, float] | None:
    """(first, last quarter's mean) when the series grows as a leak does, else None."""
    q = _quarters(values)
    if q is None:
        return None
    first, last = q
    rising = sum(b >= a_ for a_, b in zip(values, values[1:])) >= T.MEMORY_RISING_SHARE * (len(values) - 1)
    grew = last - first >= max(T.MEMORY_GROWTH_SHARE * max(first, 1.0), T.MEMORY_GROWTH_MIN_BYTES)
    return q if grew and rising else None


MEMORY_WHAT = {"process_rss": "resident memory (RSS)", "cuda_allocated": "CUDA memory allocated",
               "cuda_reserved": "CUDA memory reserved by the caching allocator"}


def memory_growth(a: AnalysisResult) -> list[Finding]:
    out = []
    series: list[tuple[str | None, str | None, str, Sequence[float]]] = [(rank, None, name, s.bytes) for rank, r in ranks_of(a) for name, s in r.memory.items()]
    for host_name, h in a.hosts.items():  # NVML's device memory, when no process sample says more
        used = h.metrics.get("gpu_mem_used")
        for index, s in (used.series if used else {}).items():
            series.append((None, host_name, f"GPU {index} memory used", s.value))
    for rank, host, name, values in series:
        q = _grew(values)
        if q is None:
            continue
        first, last = q
        growth = (last - first) / max(first, 1.0)
        what = MEMORY_WHAT.get(name, name)
        where = f"rank {rank}" if rank is not None else host
        out.append(finding(
            "memory_growth", "high" if growth >= T.MEMORY_GROWTH_SHARE_HIGH or last - first >= 2**30 else "medium",
            f"The process's {what} on {where} keeps growing: {first / 2**20:,.0f} → {last / 2**20:,.0f} MiB "
            f"(+{100 * growth:.0f}%, first to last quarter of the run)." if rank is not None else
            f"{what} on {host} keeps growing: {first / 2**30:.2f} → {last / 2**30:.2f} GiB (first to last quarter).",
            {"series": name, "first_quarter_mib": round(first / 2**20, 1), "last_quarter_mib": round(last / 2**20, 1),
             "growth_share": round(growth, 3), "samples": len(values), **({"host": host} if host else {})},
            "Something is kept from step to step: accumulate losses as loss.item() or loss.detach() (a tensor with "
            "grad keeps its whole graph), do not append outputs to lists, call optimizer.zero_grad(set_to_none=True); "
            + ("check torch.cuda.memory_allocated() per step (CUDA allocations leak)." if "cuda" in name else
               "with DataLoader workers copying Python lists, keep datasets in numpy/Arrow arrays."),
            rank))
    return out
