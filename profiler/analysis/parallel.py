"""analyze() of a folder of many ranks: each rank is read and analysed in a worker process.

Memory is bounded by the workers (one rank each at a time, os.cpu_count() of them), not by the folder: the parent
only ever holds the finished per-rank records. Ranks, warnings and errors are assigned by the loader's own code
(profiler.loader.load_with), so the result equals the sequential analyze() key for key.

One fact crosses ranks: HTA drops the last ProfilerStep when the ranks together hold at least two distinct step
names. A worker analyses with its own rank's names; a rank with fewer than two whose folder has two or more is
analysed again (rare: ranks of one job normally hold the same steps).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from sagelaunch.profiler import artifact
from sagelaunch.profiler.cycles import has_cycles
from sagelaunch.profiler.kineto_reader import read_kineto
from sagelaunch.profiler.loader import find_profile_files, load_with
from sagelaunch.profiler.records import RankAnalysis
from sagelaunch.profiler.schema import TraceMeta

if TYPE_CHECKING:
    from sagelaunch.profiler.loader import Profile

MIN_RANKS = 4  # below this, starting processes costs more than it saves


@dataclass
class RankResult:
    """What a worker sends back for one rank: its meta (for the loader) and its analysis."""

    meta: TraceMeta
    result: RankAnalysis
    step_names: set = field(default_factory=set)


def _step_names(rt) -> set:
    return {n for n in rt.names if "ProfilerStep" in n}


def _work(analyze_rank, kind: str, files: list[str], top_n: int, n_step_names: int | None) -> RankResult:
    # workers=1: this process is one of the pool already, its chunks are decoded here
    rt = read_kineto(Path(files[0]), workers=1) if kind == "trace" else artifact.read_events([Path(f) for f in files])
    names = _step_names(rt)
    n = len(names) if n_step_names is None else n_step_names
    return RankResult(meta=rt.meta, result=analyze_rank(rt, n, top_n), step_names=names)


def worth_it(root: Path) -> bool:
    if not root.is_dir() or (os.cpu_count() or 1) < 2:
        return False
    kineto, ours, _ = find_profile_files(root)
    # files of one rank's profiling cycles are joined before the analysis (the loader): read them in one process
    return len(kineto) + len(ours) >= MIN_RANKS and not has_cycles(kineto)


def analyze_folder(root: Path, top_n: int, analyze_rank) -> tuple[dict, Profile]:
    """({rank: analysis}, Profile whose ranks are RankResults) for a folder, each rank analysed by
    analyze_rank(rank_trace, n_step_names, top_n) in a worker process."""
    from sagelaunch.profiler.analysis.rank_pool import fork_pool  # lazy: the process pool's modules (~0.03 s) that the analysis of one trace never needs

    kineto, ours, _ = find_profile_files(root)
    units = [("trace", [str(f)]) for f in kineto] + [("folder", [str(f) for f in files]) for files in ours.values()]
    workers = min(os.cpu_count() or 1, len(units))
    with fork_pool(workers) as pool:
        futures = {
            (kind, tuple(files)): pool.submit(_work, analyze_rank, kind, files, top_n, None) for kind, files in units
        }
        profile = load_with(
            root,
            lambda f: futures[("trace", (str(f),))].result(),
            lambda files: futures[("folder", tuple(str(f) for f in files))].result(),
        )
        worked = cast("dict[int, RankResult]", profile.ranks)  # load_with keeps what the readers returned
        names = set().union(*(r.step_names for r in worked.values()))
        again = {
            rank: pool.submit(_work, analyze_rank, "trace" if rr.meta.kind == "kineto" else "folder",
                              [s.strip() for s in rr.meta.source.split(",")], top_n, len(names))
            for rank, rr in worked.items()
            if len(rr.step_names) < 2 <= len(names)
        }
        results = {rank: (again[rank].result().result if rank in again else rr.result)
                   for rank, rr in worked.items()}
    return results, profile
