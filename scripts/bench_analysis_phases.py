"""Where a cold `profile analyze` spends its time, per trace: `bench_profiler_analysis.py --phases`.

Each phase is timed in a fresh process, in one thread and in order (so the phases add up; the command may decode
a big trace's chunks in worker processes), and the minimum over the runs is kept per phase (the least disturbed
by other load). The interpreter's start-up is `python -c pass`; each analysis is the time of its top-level call
(helpers it calls included), wrapped around the functions of the analysis modules.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PHASES = r"""
import json, os, sys, time
os.environ["OPENBLAS_NUM_THREADS"] = "1"
os.environ["SAGELAUNCH_PROFILE_CACHE"] = "0"
from pathlib import Path
path = Path(sys.argv[1])
laps, clock = {}, [time.perf_counter()]
def lap(name):
    now = time.perf_counter()
    laps[name] = laps.get(name, 0.0) + now - clock[0]
    clock[0] = now
import msgspec
lap("import msgspec")
from sagelaunch.profiler import kineto_reader as kr
from sagelaunch.profiler.trace_file import read_trace_bytes
lap("import the reader")
raw = read_trace_bytes(path)
lap("read + gunzip")
doc = kr.decode_trace(raw, path)
lap("JSON decode (typed msgspec)")
parts, meta = [kr.event_columns(doc.traceEvents, str(path))], kr._meta_of(doc, path)
lap("columns (typed arrays)")
del doc, raw
lap("free the decoded events")
import numpy
lap("import numpy")
rank = kr.rank_from_columns(parts, meta)
lap("numpy columns, ns, sort")
from sagelaunch.profiler import analysis, figures, findings, job_settings, records
from sagelaunch.profiler.analysis import gpu_breakdown, hta_view, loop, metrics, ranks_compared
from sagelaunch.profiler.loader import _finish
from sagelaunch.profiler.schema import Profile
lap("import the analysis")
spent, depth = {}, [0]
def timed(label, fn):
    def call(*args, **kwargs):
        depth[0] += 1
        t = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - t
    return call
for mod in (gpu_breakdown, hta_view, loop, metrics, ranks_compared, figures, findings, job_settings):
    short = mod.__name__.rsplit(".", 1)[-1]
    for name, fn in list(vars(mod).items()):
        if callable(fn) and not isinstance(fn, type) and getattr(fn, "__module__", "") == mod.__name__:
            setattr(mod, name, timed(f"{short}.{name}", fn))
analysis.convert = timed("records.convert", records.convert)
clock[0] = time.perf_counter()
profile = _finish(Profile(ranks={rank.meta.rank: rank}, counters=None, source=str(path), warnings=[]))
steps = {n for n in rank.names if "ProfilerStep" in n}
result = analysis._finish({str(r): analysis.analyze_rank(rt, len(steps)) for r, rt in profile.ranks.items()},
                          profile, None)
lap("analyses")
text = records.to_json(result)
with open(os.devnull, "wb") as out:
    out.write(text + b"\n")
lap("JSON output")
with open(os.devnull, "w") as out:
    from rich.console import Console
    from sagelaunch.profiler.summary import print_summary
    print_summary(result, Console(file=out, width=120))
lap("text output instead (Rich, imports included)")
print(json.dumps({"laps": laps, "analyses": spent, "json_mb": os.path.getsize(sys.argv[1]) / 1e6}))
"""


def _fresh(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=REPO,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}).stdout


def phases(trace: Path, repeat: int) -> dict:
    """{phase: min seconds} for one trace, the interpreter's start-up and each analysis included."""
    best: dict[str, float] = {}
    for _ in range(repeat):
        t = time.perf_counter()
        _fresh([sys.executable, "-c", "pass"])
        runs = {"interpreter start-up (python -c pass)": time.perf_counter() - t}
        doc = json.loads(_fresh([sys.executable, "-c", PHASES, str(trace)]).strip().splitlines()[-1])
        runs.update(doc["laps"])
        runs.update({f"  {k}": v for k, v in doc["analyses"].items()})
        for k, v in runs.items():
            best[k] = min(best.get(k, v), v)
    return best


def print_phases(traces: list[Path], repeat: int) -> None:
    table = {t.name: phases(t, repeat) for t in traces}
    rows = list(dict.fromkeys(k for t in table.values() for k in t))
    main = [r for r in rows if not r.startswith("  ") and not r.startswith("text output")]
    big = {r for r in rows if r.startswith("  ") and max(t.get(r, 0) for t in table.values()) >= 0.002}
    names = [n.removesuffix(".pt.trace.json.gz")[:14] for n in table]
    print(f"cold, in process, one thread; ms, min of {repeat} fresh processes")
    print(f"{'phase':<46}" + "".join(f"{n:>15}" for n in names))
    for r in rows:
        if r.startswith("  ") and r not in big:
            continue
        print(f"{r[:45]:<46}" + "".join(f"{t.get(r, 0) * 1000:>15.1f}" for t in table.values()))
    small = [r for r in rows if r.startswith("  ") and r not in big]
    print(f"{'  (other analyses, each < 2 ms)':<46}" + "".join(
        f"{sum(t.get(r, 0) for r in small) * 1000:>15.1f}" for t in table.values()))
    print(f"{'sum of the phases (--json)':<46}" + "".join(
        f"{sum(t.get(r, 0) for r in main) * 1000:>15.1f}" for t in table.values()))
