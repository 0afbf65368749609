"""Two numpy helpers that avoid np.unique's/np.isin's plain paths, which import numpy.ma (~15 ms per process)."""

from __future__ import annotations

import numpy as np


def distinct(x: np.ndarray) -> np.ndarray:
    """Sorted distinct values (np.unique(x) without the numpy.ma import)."""
    if len(x) == 0:
        return x
    s = np.sort(x, kind="stable")
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def isin(values: np.ndarray, candidates) -> np.ndarray:
    """Boolean mask: values[i] in candidates."""
    cand = distinct(np.asarray(candidates, dtype=values.dtype))
    if len(cand) == 0:
        return np.zeros(len(values), dtype=bool)
    pos = np.minimum(np.searchsorted(cand, values), len(cand) - 1)
    return cand[pos] == values


def percentile(x: np.ndarray, q: float) -> float:
    """np.percentile(x, q) with its default linear interpolation (again without the numpy.ma import)."""
    s = np.sort(np.asarray(x, dtype=np.float64))
    pos = (len(s) - 1) * q / 100.0
    lo = int(np.floor(pos))
    hi = min(lo + 1, len(s) - 1)
    return float(s[lo] + (s[hi] - s[lo]) * (pos - lo))
