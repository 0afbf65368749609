"""What the browser's background load (profiler/ui/session.py) does with a profile's files: read them unit by unit
(a rank's Parquet files, a Kineto trace, the system counters) so progress advances with the bytes read, then build
the dashboard's and the timeline's JSON. Its own module, imported when a profile is first opened: the browser's
server starts and lists jobs without the analysis (numpy, msgspec)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa

from sagelaunch.profiler import artifact
from sagelaunch.profiler.loader import find_profile_files, load_profile
from sagelaunch.profiler.report.data import dashboard_data
from sagelaunch.profiler.schema import Profile
from sagelaunch.profiler.timeline.payload import payload_of
from sagelaunch.profiler.ui import sources

# the session's state update for one load: False once the user unloaded it (the load stops)
Progress = Callable[..., bool]


def read_path(path: Path, progress: Progress) -> Profile:
    """A trace file or any folder given on the command line: the loader reads it as `profile analyze` would."""
    if path.is_dir():
        return read_roots([(path, None)], progress, (0.0, 0.8))
    progress(progress=0.1, message=f"reading {path.name}")
    return load_profile(path)


def read_roots(roots: list[tuple[Path, str | None]], progress: Progress, span: tuple[float, float]) -> Profile:
    """The profile files under `roots` (each with the host its files belong to, when the folder says it), read
    unit by unit; progress moves over `span` with the bytes read."""
    units: list[tuple[str, list[Path], str | None]] = []
    for root, host in roots:
        kineto, ours, system = find_profile_files(root)
        keep = lambda ps, root=root: [p for p in ps if sources._inside(p, root)]  # noqa: E731 - no symlink escapes
        units += [("events", keep(files), host) for _, files in sorted(ours.items()) if keep(files)]
        units += [("kineto", [p], host) for p in keep(kineto)]
        if keep(system):
            units.append(("system", keep(system), host))
    if not units:
        raise LookupError("no profile files (trace-*.parquet, system-*.parquet, *.json, *.json.gz) found")
    total = sum(p.stat().st_size for _, files, _ in units for p in files) or 1
    done = 0
    ranks: dict[int, Any] = {}
    counters, warnings = [], []
    for kind, files, host in units:
        progress(message=f"reading {files[0].name}" + (f" (+{len(files) - 1} files)" if len(files) > 1 else ""))
        try:
            if kind == "system":
                counters.append(artifact.read_counters(files))
            else:
                read = ([artifact.read_events(files)] if kind == "events"
                        else list(load_profile(files[0]).ranks.values()))
                for rt in read:
                    if host and not rt.meta.host:
                        rt.meta.host = host
                    r = rt.meta.rank
                    if r in ranks:
                        new = max(ranks) + 1
                        warnings.append(f"two traces say rank {r} ({rt.meta.source}); showing the second as rank {new}")
                        rt.meta.rank = r = new
                    ranks[r] = rt
                    warnings.extend(rt.meta.warnings)
        except ValueError as exc:
            warnings.append(f"skipped {files[0].name}: {exc}")
        done += sum(p.stat().st_size for p in files)
        if not progress(progress=span[0] + (span[1] - span[0]) * done / total):
            break
    if not ranks and not counters:
        raise LookupError("nothing readable: " + "; ".join(warnings))
    table = pa.concat_tables(counters, promote_options="permissive") if counters else None
    return Profile(ranks=dict(sorted(ranks.items())), counters=table, source=", ".join(str(r) for r, _ in roots),
                   warnings=warnings)


def build(profile: Profile, title: str, progress: Progress) -> tuple[bytes, bytes, dict[str, Any]]:
    """(the dashboard's JSON, the timeline's JSON, the summary the page shows) of a read profile."""
    t = time.perf_counter()
    progress(progress=0.82, message="analysing")
    dash = dashboard_data(profile, title=title)
    progress(progress=0.9, message="building the timeline")
    payload, events = payload_of(profile, title=title)
    dash_json = orjson.dumps(dash, option=orjson.OPT_SERIALIZE_NUMPY)
    tl_json = orjson.dumps(payload)
    summary = {"ranks": sorted(profile.ranks), "events": events, "warnings": profile.warnings[:20],
               "build_s": round(time.perf_counter() - t, 3)}
    return dash_json, tl_json, summary
