"""load_profile(path): our artifacts or Kineto traces (.json, .json.gz, a folder of ranks) → Profile.

Accepted paths:
- a Kineto/Chrome trace file (``*.json`` / ``*.json.gz``): one rank (``distributedInfo.rank``, else 0);
- a folder: every trace file under it (recursively; one rank's files of several profiling cycles, as
  tensorboard_trace_handler writes them, are joined into that rank: profiler/cycles.py) and/or our artifact (``**/rank-*/trace-*.parquet`` and
  ``**/system-*.parquet``, see profiler/schema.py); a job's ``output/profiler`` folder is such a folder;
- a single ``trace-*.parquet`` or ``system-*.parquet`` file.

Files that cannot be read are skipped with a warning when others can; with nothing readable a
ProfileLoadError (a ValueError) says why for each file.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from sagelaunch.profiler import artifact
from sagelaunch.profiler.cycles import join_cycles, same_process
from sagelaunch.profiler.kineto_reader import ProfileLoadError, read_kineto
from sagelaunch.profiler.schema import Profile, RankTrace
from sagelaunch.profiler.trace_file import NotATrace

__all__ = ["load_profile", "load_with", "ProfileLoadError", "find_profile_files"]

_TRACE_SUFFIXES = (".json", ".json.gz")
_RANK_DIR = re.compile(r"rank-(\d+)$")


def find_profile_files(root: Path) -> tuple[list[Path], dict[str, list[Path]], list[Path]]:
    """(kineto files, {rank folder: trace parquet files}, system parquet files) under root."""
    kineto, ours, system = [], defaultdict(list), []
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        name = p.name
        if name.endswith(_TRACE_SUFFIXES):
            kineto.append(p)
        elif name.startswith("trace-") and name.endswith(".parquet"):
            ours[str(p.parent)].append(p)
        elif name.startswith("system-") and name.endswith(".parquet"):
            system.append(p)
    return kineto, dict(ours), system


def _add_rank(ranks: dict, rt: RankTrace, warnings: list[str]) -> None:
    r = rt.meta.rank
    if r in ranks and same_process(ranks[r], rt):  # torch.profiler's files of one rank, one per profiling cycle
        ranks[r] = join_cycles(ranks[r], rt)
        return
    if r in ranks:
        new = max(ranks) + 1
        warnings.append(
            f"ranks disagree: {rt.meta.source} and {ranks[r].meta.source} both say rank {r}; "
            f"keeping the second as rank {new}"
        )
        rt.meta.rank = new
        r = new
    ranks[r] = rt


def load_profile(path) -> Profile:
    """Read a profile; see the module docstring for what `path` may be."""
    return load_with(path, read_kineto, read_rank_folder)


def read_rank_folder(files: list[Path]) -> RankTrace:
    """One rank of our artifact (pyarrow is imported only when a profile holds one)."""
    return artifact.read_events(files)


def load_with(path, read_trace, read_rank_folder) -> Profile:
    """load_profile with the two per-rank readers given: read_trace(file) and read_rank_folder(parquet files), each
    returning an object with a TraceMeta `.meta` (a RankTrace, or what profiler.analysis.parallel computes in
    worker processes) or raising ProfileLoadError. Ranks, warnings and errors come out exactly as load_profile's."""
    root = Path(path).expanduser()
    if not root.exists():
        raise ProfileLoadError(f"{root}: no such file or folder; pass a trace (.json/.json.gz) or a profile folder")
    warnings: list[str] = []
    ranks: dict[int, RankTrace] = {}
    counters = None
    if root.is_file():
        if root.name.endswith(".parquet"):
            if root.name.startswith("system-"):
                counters = artifact.read_counters([root])
            else:
                _add_rank(ranks, read_rank_folder([root]), warnings)
        else:
            _add_rank(ranks, read_trace(root), warnings)
        return _finish(Profile(ranks=ranks, counters=counters, source=str(root), warnings=warnings))

    kineto, ours, system = find_profile_files(root)
    if not (kineto or ours or system):
        raise ProfileLoadError(
            f"{root}: no traces found (looked for *.json, *.json.gz, rank-*/trace-*.parquet, system-*.parquet)"
        )
    errors: list[str] = []
    not_traces: list[str] = []
    for folder, files in sorted(ours.items()):
        try:
            _add_rank(ranks, read_rank_folder(files), warnings)
        except ProfileLoadError as exc:
            errors.append(str(exc))
    for f in kineto:
        try:
            _add_rank(ranks, read_trace(f), warnings)
        except ProfileLoadError as exc:
            if isinstance(exc, NotATrace):  # a job folder also holds config JSON (hyperparameters.json…)
                not_traces.append(f.name)
            else:
                errors.append(str(exc))
    if system:
        try:
            counters = artifact.read_counters(system)
        except ProfileLoadError as exc:
            errors.append(str(exc))
    if not ranks and counters is None:
        raise ProfileLoadError("nothing readable:\n  " + "\n  ".join(errors + [f"{n}: not a trace" for n in not_traces]))
    if not_traces:
        warnings.append(f"ignored {len(not_traces)} JSON files that are not traces ({', '.join(not_traces[:5])})")
    warnings.extend(f"skipped: {e}" for e in errors)
    return _finish(Profile(ranks=ranks, counters=counters, source=str(root), warnings=warnings))


def _finish(profile: Profile) -> Profile:
    sizes = {r.meta.world_size for r in profile.ranks.values() if r.meta.world_size}
    if len(sizes) > 1:
        profile.warnings.append(f"ranks disagree on world_size: {sorted(sizes)}")
    for r in profile.ranks.values():
        profile.warnings.extend(r.meta.warnings)
    profile.ranks = dict(sorted(profile.ranks.items()))
    return profile
