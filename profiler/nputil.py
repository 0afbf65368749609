"""numpy helpers that avoid np.unique's/np.isin's plain paths, np.percentile and np.histogram_bin_edges("auto"),
which import numpy.ma (~10-15 ms of a 0.1 s command); each returns exactly what the numpy function returns."""

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
    """np.percentile(x, q) (default "linear" method), bit for bit: numpy's virtual index (n - 1) * (q / 100) and
    its two-sided interpolation (from the upper neighbour when the weight is 0.5 or more)."""
    s = np.sort(np.asarray(x, dtype=np.float64))
    virtual = (len(s) - 1) * (q / 100)
    if virtual >= len(s) - 1:
        return float(s[-1])
    if virtual <= 0:
        return float(s[0])
    lo = int(virtual // 1)
    a, b, t = s[lo], s[lo + 1], virtual - lo
    diff = b - a
    return float(b - diff * (1 - t)) if t >= 0.5 else float(a + diff * t)


def auto_bin_count(d: np.ndarray) -> int:
    """len(np.histogram_bin_edges(d, bins="auto")) - 1 for float64 values with max > min: the smaller of the
    Sturges width and the Freedman-Diaconis width (at least half the square-root rule's), as numpy computes them."""
    lo, hi = d.min(), d.max()
    ptp = hi - lo
    fd = 2.0 * (percentile(d, 75) - percentile(d, 25)) * d.size ** (-1.0 / 3.0)
    sturges = ptp / (np.log2(d.size) + 1.0)
    width = min(max(fd, ptp / np.sqrt(d.size) / 2), sturges)
    return int(np.ceil(ptp / width)) if width else 1
