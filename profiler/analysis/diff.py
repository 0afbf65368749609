"""Two profiles side by side: what got slower or faster, by phase, by annotation and by GPU kernel.

The kernels' counts and total durations equal HTA 0.5's ``TraceDiff.compare_traces`` (device_type=GPU, every
iteration): the GPU rows HTA keeps (its µs rounding: hta_view.py; TraceDiff keeps the last ProfilerStep), grouped by
name, ``diff = B - A`` (tests/profiler/test_profile_diff.py). Annotations are compared the same way (host-side spans by name, steps pooled), phases and the step
cycle per step (profiler/analysis/loop.py), so runs of different lengths compare.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from sagelaunch.profiler.analysis import hta_view
from sagelaunch.profiler.analysis.loop import loop
from sagelaunch.profiler.analysis.metrics import annotation_groups
from sagelaunch.profiler.loader import load_profile

from sagelaunch.profiler.records import Loop, NameChange, PhaseChange, ProfileDiff, convert
from sagelaunch.profiler.schema import Profile


def _by_name(names: list[str], name_id: np.ndarray, dur: np.ndarray) -> dict[str, tuple[int, float]]:
    if not len(name_id):
        return {}
    uniq, inv = np.unique(name_id, return_inverse=True)
    counts, sums = np.bincount(inv), np.bincount(inv, weights=dur)
    return {names[u]: (int(c), float(s)) for u, c, s in zip(uniq.tolist(), counts.tolist(), sums.tolist())}


def _merge(into: dict, part: dict) -> None:
    for name, (c, s) in part.items():
        c0, s0 = into.get(name, (0, 0.0))
        into[name] = (c0 + c, s0 + s)


def kernel_totals(profile: Profile) -> dict[str, tuple[int, float]]:
    """(count, total µs) per GPU event name over every rank, as HTA's compare_traces sums them."""
    step_names = {n for rt in profile.ranks.values() for n in rt.names if "ProfilerStep" in n}
    out: dict[str, tuple[int, float]] = {}
    for rt in profile.ranks.values():
        view = hta_view.build(rt, len(step_names), include_last_step=True).gpu()  # TraceDiff keeps every step
        _merge(out, _by_name(view.names, view.name_id, view.dur))
    return out


def annotation_totals(profile: Profile) -> dict[str, tuple[int, float]]:
    """(count, total µs) per host-side annotation, steps pooled as step_N / ProfilerStep#N."""
    out: dict[str, tuple[int, float]] = {}
    for rt in profile.ranks.values():
        groups = annotation_groups(rt)
        _merge(out, {k: (len(v), float(v.sum()) / 1e3) for k, v in groups.items() if not k.endswith(" (GPU)")})
    return out


def _rows(a: dict, b: dict, top: int) -> list[NameChange]:
    rows = []
    for name in a.keys() | b.keys():
        (ac, at), (bc, bt) = a.get(name, (0, 0.0)), b.get(name, (0, 0.0))
        rows.append(NameChange(name=name, a_count=ac, b_count=bc, a_total_us=at, b_total_us=bt,
                               diff_counts=bc - ac, diff_duration_us=bt - at))
    rows.sort(key=lambda r: (-abs(r.diff_duration_us), r.name))
    return rows[:top] if top else rows


def _phases(profile: Profile) -> dict[str, float]:
    """Mean µs per step of each phase (and the cycle), averaged over the ranks that have steps (the loop section of
    the analysis, profiler/analysis/loop.py: only it, not the whole analysis)."""
    loops = [convert(found, Loop) for rt in profile.ranks.values() if (found := loop(rt)) is not None]
    means = [lp.mean_us.measured() for lp in loops if lp.judged]
    keys = {k for m in means for k in m}
    return {k: sum(m.get(k, 0.0) for m in means) / len(means) for k in sorted(keys)} if means else {}


def diff(path_a, path_b, top: int = 20) -> ProfileDiff:
    """What changed from profile A to profile B (paths load_profile accepts, or Profiles)."""
    pa = path_a if isinstance(path_a, Profile) else load_profile(Path(path_a).expanduser())
    pb = path_b if isinstance(path_b, Profile) else load_profile(Path(path_b).expanduser())
    fa, fb = _phases(pa), _phases(pb)
    phases = [PhaseChange(phase=k, a_us_per_step=fa.get(k, 0.0), b_us_per_step=fb.get(k, 0.0),
                          diff_us_per_step=fb.get(k, 0.0) - fa.get(k, 0.0)) for k in sorted(fa.keys() | fb.keys())]
    phases.sort(key=lambda r: (r.phase != "cycle", -abs(r.diff_us_per_step)))
    return ProfileDiff(a=pa.source, b=pb.source, phases=phases,
                       annotations=_rows(annotation_totals(pa), annotation_totals(pb), top),
                       kernels=_rows(kernel_totals(pa), kernel_totals(pb), top))
