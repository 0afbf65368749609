"""The training loop of one rank: its steps, what each step's time went to, and the process's memory.

Steps come from, in this order: step annotations (``step_N``, ``ProfilerStep#N``: the scripts', the Hugging Face
callback's, torch.profiler's); else the ``optimizer.step`` spans of our torch hooks (profiler/torch_hooks.py) or
Kineto's ``Optimizer.step#…`` operators, one step ending at each. With gradient accumulation (the optimizer — its
annotation or hook — in every k-th step annotation only) the annotations are micro-steps: a step is the k of them up
to the optimizer's (``micro_steps_per_step``); where each step annotation already spans k micro-batches (the Hugging
Face Trainer's step_N), k is the recorded gradient_accumulation_steps; where steps come from optimizer.step, k is the
DataLoader batches each took. A step's **cycle** runs from its start to the next
step's start, so time spent between step annotations (fetching the next batch before the Hugging Face callback opens
``step_N``, a checkpoint after the step) belongs to the step before it.

Per cycle: input wait (the DataLoader's ``__next__`` — our hook's spans or Kineto's ``enumerate(DataLoader)#…`` —
both inside the step annotation and between steps; Kineto's alone, under a duty cycle, over the steps that recorded
operators: ``input_steps``, ``mean_us.input_cycle``), and the time inside Forward/Backward/Optimizer annotations
(the Optimizer phase also from the ``optimizer.step`` hook), and a pipeline stage's time blocked in its receives from
the peer stage (``pipeline_wait`` annotations, one per microbatch's receive: the bubble, measured; a step-end
collective is not annotated so, and is not counted as bubble). The first cycles until the loop settles (``warmup_steps``:
first-step compilation and allocation, the profiler's own start-up; at least 2, at most a tenth of the run) and the steps slowed by the profiler (operators recorded,
our writer converting a window) are left out of the ``judged`` figures the findings read.
"""

from __future__ import annotations

import numpy as np

from sagelaunch.jobspec.library_marks import GRADIENT_ACCUMULATION_STEPS, PIPELINE_WAIT
from sagelaunch.profiler.analysis.gpu_breakdown import covered_upto, merge_intervals
from sagelaunch.profiler.analysis.metrics import (DATALOADER, STEP_NAME, during_profiler_writing, step_number,
                                                  steps_with_ops)
from sagelaunch.profiler.nputil import percentile
from sagelaunch.profiler.schema import (
    CAT_CPU_OP,
    CAT_HOOK,
    CAT_MEMORY_SAMPLE,
    CAT_USER_ANNOTATION,
    HOOK_DATALOADER_NEXT,
    HOOK_OPTIMIZER_STEP,
    RankTrace,
)

PHASES = ("forward", "backward", "optimizer")
MEMORY_POINTS = 300  # per series in the JSON


WARMUP_SETTLED_STEPS = 5  # the loop has settled when this many cycles in a row stay within 1.5x the median
WARMUP_MAX_SHARE = 0.10  # ... or at the latest after this share of the steps
ACCUMULATION_MIN_STEPS = 3  # optimizer steps needed to see gradient accumulation's period
ACCUMULATION_REGULAR_SHARE = 0.9  # of the gaps between optimizer micro-steps, at the period


def warmup_steps(cycles: np.ndarray) -> int:
    """Cycles left out at the start (first-step compilation and allocation, the profiler's own start-up): at least
    two; more while the loop has not settled, up to a tenth of the run (a slow step later is judged, not hidden)."""
    n = len(cycles)
    limit = max(2, int(WARMUP_MAX_SHARE * n))
    calm = cycles <= 1.5 * percentile(cycles, 50) if n else np.zeros(0, dtype=bool)
    settled = next((i for i in range(max(0, n - WARMUP_SETTLED_STEPS + 1))
                    if calm[i:i + WARMUP_SETTLED_STEPS].all()), limit)
    return max(2, min(settled, limit))


def _names_matching(rt: RankTrace, test) -> np.ndarray:
    return np.array([bool(test(n)) for n in rt.names] or [False], dtype=bool)


def step_boundaries(rt: RankTrace):
    """(source, step numbers, starts, ends, cycle ends) in ns, sorted, or None when no step is found."""
    ts, end, nid = rt["ts_ns"], rt["ts_ns"] + rt["dur_ns"], rt["name_id"]
    is_step = _names_matching(rt, STEP_NAME.match)
    rows = np.flatnonzero(rt.mask_cat(CAT_USER_ANNOTATION) & is_step[nid]) if len(rt) else np.zeros(0, np.int64)
    if len(rows):
        rows = rows[np.argsort(ts[rows], kind="stable")]
        starts, ends = ts[rows], end[rows]
        numbers = np.array([step_number(rt.names[i]) for i in nid[rows].tolist()])
        cycle_ends = np.append(starts[1:], ends[-1])
        if rt.meta.cycles_ns:  # the last step of a profiling cycle ends there: the pause to the next is no step's
            cycle_of = np.searchsorted([c[0] for c in rt.meta.cycles_ns], starts, side="right")
            last = np.append(cycle_of[1:] != cycle_of[:-1], True)
            cycle_ends = np.where(last, ends, cycle_ends)
        return "step annotations", numbers, starts, ends, np.maximum(cycle_ends, ends)
    hook = _names_matching(rt, lambda n: n == HOOK_OPTIMIZER_STEP)
    opt = rt.mask_cat(CAT_HOOK) & hook[nid]
    source = "optimizer.step hooks"
    if not opt.any():
        opt = rt.mask_cat(CAT_CPU_OP) & _names_matching(rt, lambda n: n.startswith("Optimizer.step#"))[nid]
        source = "Optimizer.step operators"
    rows = np.flatnonzero(opt)
    if len(rows) < 2:
        return None
    ends = np.sort(end[rows])
    # one step ends at each optimizer step; the first has no known start and is left out
    return source, np.arange(2, len(ends) + 1), ends[:-1], ends[1:], ends[1:]


def _coverage(rt: RankTrace, mask: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Time (ns) the union of the masked events covers inside each [lo, hi)."""
    rows = np.flatnonzero(mask)
    if not len(rows) or not len(lo):
        return np.zeros(len(lo))
    ref = int(lo.min())
    s, e = merge_intervals((rt["ts_ns"][rows] - ref).astype(np.float64),
                           (rt["ts_ns"][rows] + rt["dur_ns"][rows] - ref).astype(np.float64))
    return covered_upto(s, e, (hi - ref).astype(np.float64)) - covered_upto(s, e, (lo - ref).astype(np.float64))


def _with_operators(rt: RankTrace, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Which steps a duty cycle recorded framework operators in (all False when operators cover the whole trace)."""
    if not rt.meta.cpu_ops_sampled:
        return np.zeros(len(starts), dtype=bool)
    return steps_with_ops(rt, starts, ends)


def _slowed_by_profiler(rt: RankTrace, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    # Kineto recorded these steps' operators, or our writer thread converted a window meanwhile
    return _with_operators(rt, starts, ends) | during_profiler_writing(rt, starts, ends)


def unexplained(rt: RankTrace, starts: np.ndarray, ends: np.ndarray, cycle_ends: np.ndarray,
                judged: np.ndarray) -> dict | None:
    """Mean µs per judged step that no recorded work explains (no phase or other annotation, DataLoader, hook or
    operator runs), by where it sits: inside the step annotation before its first recorded work ("before Forward"),
    between its pieces of work, after its last, and between the step annotation's end and the next step's start.
    None without step annotations' spans or without judged steps."""
    if not judged.any():
        return None
    step = _names_matching(rt, STEP_NAME.match)[rt["name_id"]]
    work = (rt.mask_cat(CAT_USER_ANNOTATION) & ~step) | rt.mask_cat(CAT_HOOK, CAT_CPU_OP)
    rows = np.flatnonzero(work)
    ref = int(starts.min())
    lo, hi, nxt = [(x - ref).astype(np.float64) for x in (starts, ends, cycle_ends)]
    if len(rows):
        s, e = merge_intervals((rt["ts_ns"][rows] - ref).astype(np.float64),
                               (rt["ts_ns"][rows] + rt["dur_ns"][rows] - ref).astype(np.float64))
    else:
        s = e = np.zeros(0)

    def covered(a, b):
        return covered_upto(s, e, b) - covered_upto(s, e, a)

    k = np.searchsorted(e, lo, side="right")  # the first piece of work ending after the step's start
    first = np.where(k < len(s), np.maximum(s[np.minimum(k, len(s) - 1)] if len(s) else lo, lo), hi)
    first = np.minimum(first, hi)
    j = np.searchsorted(s, hi, side="left") - 1  # the last starting before the step annotation's end
    last = np.where(j >= 0, np.minimum(e[np.maximum(j, 0)] if len(s) else hi, hi), lo)
    last = np.maximum(last, first)
    inside = covered(lo, hi)
    parts = {"before_first_work": first - lo, "between_work": (last - first) - covered(first, last),
             "after_last_work": hi - last, "between_steps": (nxt - hi) - covered(hi, nxt)}
    cycle = nxt - lo
    out = {k: round(float(v[judged].mean()) / 1e3, 3) for k, v in parts.items()}
    out["explained"] = round(float((inside + covered(hi, nxt))[judged].mean()) / 1e3, 3)
    out["cycle"] = round(float(cycle[judged].mean()) / 1e3, 3)
    out["total"] = round(sum(out[k] for k in parts), 3)
    return out


def accumulation_period(optimizer_in_step: np.ndarray) -> int | None:
    """k when the optimizer runs in every k-th step annotation only (gradient accumulation: the annotations are
    micro-steps); None when it runs in most of them or without a regular period."""
    idx = np.flatnonzero(optimizer_in_step)
    if len(idx) < ACCUMULATION_MIN_STEPS or len(idx) > 0.75 * len(optimizer_in_step):
        return None
    gaps = np.diff(idx)
    values, counts = np.unique(gaps, return_counts=True)
    k = int(values[np.argmax(counts)])
    return k if k >= 2 and counts.max() >= ACCUMULATION_REGULAR_SHARE * len(gaps) else None


def accumulation_setting(job_settings: dict[str, int]) -> int | None:
    """k from the job's recorded gradient_accumulation_steps (the HF Trainer's, noted by our callback); None for 1."""
    k = job_settings.get(GRADIENT_ACCUMULATION_STEPS)
    return k if isinstance(k, int) and k > 1 else None


def accumulation_period_of_batches(batches_per_step: np.ndarray) -> int | None:
    """k when (nearly) every optimizer step took k ≥ 2 batches from the DataLoader: steps found from optimizer.step
    are already optimizer steps, and the batches are their micro-steps."""
    if len(batches_per_step) < ACCUMULATION_MIN_STEPS:
        return None
    values, counts = np.unique(batches_per_step, return_counts=True)
    k = int(values[np.argmax(counts)])
    return k if k >= 2 and counts.max() >= ACCUMULATION_REGULAR_SHARE * len(batches_per_step) else None


def _starts_within(rt: RankTrace, mask: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """How many masked events start inside each [lo, hi)."""
    ts = rt["ts_ns"][mask]  # sorted, as every column
    return np.searchsorted(ts, hi, side="left") - np.searchsorted(ts, lo, side="left")


def _per_step(rt: RankTrace, mask: np.ndarray, lo: np.ndarray, hi: np.ndarray, over: np.ndarray) -> float:
    """Mean number of masked events starting inside each judged [lo, hi)."""
    counts = _starts_within(rt, mask, lo, hi)
    return round(float(counts[over].mean()), 2) if over.any() else 0.0


def _us(a) -> list[float]:
    return [round(float(x) / 1e3, 3) for x in a]


def loop(rt: RankTrace) -> dict | None:
    """The rank's steps and their cycles (None when no step is found: no step annotation, no optimizer step)."""
    found = step_boundaries(rt)
    if found is None:
        return None
    source, numbers, starts, ends, cycle_ends = found
    nid = rt["name_id"]
    lower = [n.lower() for n in rt.names] or [""]
    ann = rt.mask_cat(CAT_USER_ANNOTATION)
    phase_masks = {p: ann & np.array([p in n for n in lower], dtype=bool)[nid] for p in PHASES}
    phase_masks["optimizer"] |= rt.mask_cat(CAT_HOOK) & _names_matching(rt, lambda n: n == HOOK_OPTIMIZER_STEP)[nid]
    micro = None
    if source == "step annotations":  # gradient accumulation: a step is k annotated micro-steps, the optimizer ending it
        with_optimizer = _coverage(rt, phase_masks["optimizer"], starts, ends) > 0
        micro = accumulation_period(with_optimizer)
    if micro:
        last = np.flatnonzero(with_optimizer)
        first = np.append(0, last[:-1] + 1)
        numbers, starts, ends, cycle_ends = numbers[last], starts[first], ends[last], cycle_ends[last]
    else:  # steps that already span the accumulation (the HF Trainer's step_N): k as the job set it
        micro = accumulation_setting(rt.meta.job_settings)
    hook_input = rt.mask_cat(CAT_HOOK) & _names_matching(rt, lambda n: n == HOOK_DATALOADER_NEXT)[nid]
    if micro is None and source == "optimizer.step hooks" and hook_input.any():  # k batches per optimizer step
        micro = accumulation_period_of_batches(_starts_within(rt, hook_input, starts, cycle_ends))
    op_input = rt.mask_cat(CAT_CPU_OP, CAT_USER_ANNOTATION) & _names_matching(rt, DATALOADER.search)[nid]
    input_mask = hook_input | op_input
    input_inside = _coverage(rt, input_mask, starts, ends)
    input_between = _coverage(rt, input_mask, ends, cycle_ends)
    cycles = (cycle_ends - starts).astype(np.float64)
    phase = {p: _coverage(rt, m, starts, cycle_ends) for p, m in phase_masks.items()}
    warmup = warmup_steps(cycles)
    judged = np.ones(len(starts), dtype=bool)
    judged[:warmup] = False
    slowed = _slowed_by_profiler(rt, starts, ends)
    judged &= ~slowed
    phases_seen = [p for p in PHASES if phase_masks[p].any()]
    wait_mask = ann & _names_matching(rt, lambda n: n.lower() == PIPELINE_WAIT)[nid]
    waits = _coverage(rt, wait_mask, starts, cycle_ends) if wait_mask.any() else None

    def mean(a, over=judged) -> float:
        return round(float(a[over].mean()) / 1e3, 3) if over.any() else 0.0

    # DataLoader operators recorded by a duty cycle exist in the recorded steps only: the input is measured there
    input_over = judged
    if rt.meta.cpu_ops_sampled and op_input.any() and not hook_input.any():
        input_over = _with_operators(rt, starts, ends)

    t0 = int(starts[0])
    return {
        "source": source,
        **({"micro_steps_per_step": micro} if micro else {}),
        "count": int(len(starts)),
        "judged": int(judged.sum()),
        "warmup_steps": warmup,
        "slowed_by_profiler": int(slowed.sum()),
        "input_source": ("DataLoader hooks" if hook_input.any() else "DataLoader operators" if op_input.any() else None),
        "phases": phases_seen,
        "step": numbers.tolist(),
        "start_us": _us(starts - t0),
        "cycle_us": _us(cycles),
        "annotated_us": _us(ends - starts),
        "input_us": _us(input_inside + input_between),
        "judged_mask": judged.tolist(),
        "input_steps": int(input_over.sum()),
        "mean_us": {"cycle": mean(cycles), "input": mean(input_inside + input_between, input_over),
                    "input_cycle": mean(cycles, input_over),
                    "input_between_steps": mean(input_between, input_over),
                    "input_inside_steps": mean(input_inside, input_over),
                    **{p: mean(phase[p]) for p in phases_seen},
                    **({"pipeline_wait": mean(waits)} if waits is not None else {})},
        **({"pipeline_waits_per_step": _per_step(rt, wait_mask, starts, cycle_ends, judged)}
           if waits is not None else {}),
        **({"phase_us": {p: _us(phase[p]) for p in phases_seen}} if phases_seen else {}),
        "total_judged_us": round(float(cycles[judged].sum()) / 1e3, 3),
        **({"unexplained_us": u} if source == "step annotations" and (u := unexplained(
            rt, starts, ends, cycle_ends, judged)) else {}),
    }


def memory(rt: RankTrace) -> dict:
    """The process's memory samples by name (process_rss, cuda_allocated, cuda_reserved): seconds from the first
    sample, bytes; at most MEMORY_POINTS per series."""
    sel = rt.mask_cat(CAT_MEMORY_SAMPLE)
    if not sel.any():
        return {}
    ts, nbytes, nid = rt["ts_ns"][sel], rt["bytes"][sel], rt["name_id"][sel]
    t0 = int(ts.min())
    out = {}
    for code in sorted(set(nid.tolist())):
        m = nid == code
        stride = max(1, int(np.ceil(m.sum() / MEMORY_POINTS)))
        out[rt.names[code]] = {"t_s": [round((int(x) - t0) / 1e9, 4) for x in ts[m][::stride]],
                               "bytes": [int(x) for x in nbytes[m][::stride]], "samples": int(m.sum())}
    return out
