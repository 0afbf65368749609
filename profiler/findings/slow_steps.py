"""Slow steps: judged steps slower than their neighbours, and those that recur with a period. Shared by step_outlier
(loop_rules.py) and host_contention (host_rules.py)."""

from __future__ import annotations

import numpy as np

from sagelaunch.profiler.findings import thresholds as T
from sagelaunch.profiler.records import Loop


def judged(values: list, loop: Loop) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)[np.asarray(loop.judged_mask, dtype=bool)]


def _rolling_median(x: np.ndarray, window: int) -> np.ndarray:
    """The median of each value's neighbours (`window` steps centred on it; fewer at the ends, never repeated ones).
    Sorted windows rather than np.nanmedian, which imports numpy.ma (~10 ms of every analyze)."""
    half = window // 2
    padded = np.pad(x.astype(np.float64), half, constant_values=np.nan)
    windows = np.sort(np.lib.stride_tricks.sliding_window_view(padded, 2 * half + 1), axis=1)  # NaNs sort last
    k = (~np.isnan(windows)).sum(axis=1)
    rows = np.arange(len(windows))
    return (windows[rows, (k - 1) // 2] + windows[rows, k // 2]) / 2


def periodic(numbers: np.ndarray, slow: np.ndarray, excess: np.ndarray) -> tuple[int, np.ndarray] | None:
    """(period, which steps) when slow steps recur every p steps: ≥ STEP_OUTLIER_PERIOD_MIN_REPEATS of them, most steps
    at that period slow, each losing more than the slow steps between them (noise) ever do. Periods are tried from the
    differences between the slowest steps."""
    order = np.argsort(-excess)[:6]
    top = numbers[order][excess[order] > 0]
    best = None
    for p in sorted({abs(int(a) - int(b)) for a in top for b in top if abs(int(a) - int(b)) >= 2}):
        for offset in sorted({int(n) % p for n in top}):
            members = numbers % p == offset
            hits = members & slow
            if hits.sum() < T.STEP_OUTLIER_PERIOD_MIN_REPEATS or hits.sum() < 0.75 * members.sum():
                continue
            rest = slow & ~members
            if rest.any() and excess[hits].min() <= excess[rest].max():
                continue  # the "period" does not stand out from the other slow steps
            if best is None or excess[hits].sum() > excess[best[1]].sum():
                best = (p, hits)
    return best


def slow_steps(loop: Loop) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """(cycles, step numbers, slow mask, excess µs) of the judged steps: slow against the median of their neighbours
    (a drift is not an outlier); None when too few steps are judged."""
    if loop.judged < T.STEP_OUTLIER_MIN_STEPS:
        return None
    cycles, numbers = judged(loop.cycle_us, loop), judged(loop.step, loop).astype(int)
    ref = _rolling_median(cycles, T.STEP_OUTLIER_WINDOW)
    slow = cycles >= T.STEP_OUTLIER_RATIO * ref
    return cycles, numbers, slow, np.where(slow, cycles - ref, 0.0)


def periodic_steps(numbers: np.ndarray, slow: np.ndarray, excess: np.ndarray) -> np.ndarray:
    """The slow steps that recur with a period (checkpoints, evaluation, logging: the user's code), else none."""
    found = periodic(numbers, slow, excess)
    return found[1] if found else np.zeros(len(slow), dtype=bool)
