"""Analysis speed and peak memory, cold and warm: `profile analyze --json` vs HTA 0.5 and vs the floor (gunzip + parse
the JSON), side by side in one run, on every real GPU trace of tests/data and on a 16-rank folder.

Each contender runs in a fresh process, from process start to results printed, interleaved (run i of every
contender, then run i+1), after one untimed run each; wall time, CPU time (user+sys of the process and its workers)
and peak RSS (of the largest process). Ratios are paired: per run i, HTA's wall / ours, then the median over runs.
Compiled bytecode is kept for both, as an installed package has it.

- "ours cold": SAGELAUNCH_PROFILE_CACHE=0, the JSON is parsed; "ours cold, 1 core": pinned to one core (taskset:
  no chunk workers, as on a busy machine);
  "ours warm": the parsed columns cached by an earlier run, as for a second analyze/report/ui of the same trace;
  "sagelaunch CLI cold": through `sagelaunch profile analyze`.
- "HTA 0.5 cold": HTA's own environment (.venv-hta, see scripts/make_hta_fixtures.py): TraceAnalysis load +
  get_temporal_breakdown + get_gpu_kernel_breakdown + get_cuda_kernel_launch_stats (HTA has no parse cache).
- "floor": `python -c` that gunzips the file and parses it with the fastest JSON reader installed (chosen per trace,
  in process, among orjson, msgspec, simdjson and json; ISA-L's inflate where installed): what any analysis of the
  file must at least pay, with the same interpreter.
- "in process" rows time only the work, imports left out, in a fresh process (ours cold; HTA's load + analyses);
  they are compared with each other.

--phases prints where a cold run's time goes per trace (in process, one thread, min of --repeat fresh processes).

    .venv/bin/python scripts/bench_profiler_analysis.py [TRACE_OR_FOLDER ...] [--repeat 5] [--folder-repeat 1]
                                                        [--hta-python .venv-hta/bin/python] [--phases]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # scripts.bench_analysis_phases, run from a checkout
TRACES = REPO / "tests" / "data" / "traces"
# every real GPU trace of tests/data (the findings' labelled set's and the benchmark's own included)
TRACE_FOLDERS = (TRACES, REPO / "tests" / "data" / "profiler" / "findings_set" / "traces",
                 REPO / "tests" / "data" / "profiler" / "bench_traces")
HEADLINE_GZ_BYTES = 700_000  # the traces a user waits for (0.7 MB gzipped and up): the targets' median is over these

# HTA's load + the three analyses, as the text of a function both HTA scripts define and call
HTA_ANALYSES = """
def hta_analyses(trace_dir):
    a = TraceAnalysis(trace_dir=trace_dir)
    tb = a.get_temporal_breakdown(visualize=False)
    kb = a.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
    ls = a.get_cuda_kernel_launch_stats(visualize=False)
    return [tb.to_json(), kb[0].to_json(), {r: len(v) for r, v in ls.items()}]
"""
HTA_SCRIPT = """
import logging, sys
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
""" + HTA_ANALYSES + """
print(*hta_analyses(sys.argv[1]), sep="\\n")
"""

# In process, imports excluded: each prints {"work_s", "work_cpu_s"} as its last line (HTA also when it raises).
# Both set OPENBLAS_NUM_THREADS=1 before numpy loads, as our CLI does (idle OpenBLAS threads spin, doubling CPU time).
HTA_IN_PROCESS = """
import json, logging, os, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
""" + HTA_ANALYSES + """
t, c = time.perf_counter(), time.process_time()
try:
    hta_analyses(sys.argv[1])
    rc = 0
except Exception:
    rc = 1
print(json.dumps({"work_s": time.perf_counter() - t, "work_cpu_s": time.process_time() - c}))
sys.exit(rc)
"""
OURS_IN_PROCESS = """
import json, os, sys, time
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import sagelaunch.profiler.analysis, sagelaunch.profiler.analysis.counters, sagelaunch.profiler.analysis.gpu_breakdown
import sagelaunch.profiler.analysis.hta_view, sagelaunch.profiler.analysis.metrics, sagelaunch.profiler.figures
import sagelaunch.profiler.findings, sagelaunch.profiler.job_settings, sagelaunch.profiler.kineto_reader
import sagelaunch.profiler.loader, sagelaunch.profiler.records
from sagelaunch import profiler
t, c = time.perf_counter(), time.process_time()
text = profiler.records.to_json(profiler.analysis.analyze(sys.argv[1]))
print(json.dumps({"work_s": time.perf_counter() - t, "work_cpu_s": time.process_time() - c}))
"""

# Runs one command and reports its wall time and its own peak RSS (the wrapper has no other children).
MEASURE = """
import resource, subprocess, sys, time, json
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": p.returncode, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_mb": ru.ru_maxrss / 1024,
                  "out_bytes": len(p.stdout), "last_line": (p.stdout.strip().splitlines() or [b""])[-1].decode()}))
"""


# The floor: gunzip and parse, nothing else. {reader} is filled in with the fastest reader for the trace.
FLOOR = """
import sys
try:
    from isal.isal_zlib import decompress
except ImportError:
    from zlib import decompress
data = open(sys.argv[1], "rb").read()
if data[:2] == b"\\x1f\\x8b":
    data = decompress(data, 31)
{reader}
"""
READERS = {  # generic parses of the whole document, each a statement on `data`
    "orjson": "import orjson; orjson.loads(data)",
    "msgspec": "import msgspec; msgspec.json.decode(data)",
    "simdjson": "import simdjson; simdjson.Parser().parse(data)",
    "json": "import json; json.loads(data)",
}
PICK_READER = """
import json, sys, time
floor, readers = sys.argv[1], json.loads(sys.argv[2])
sys.argv[1:] = sys.argv[3:]  # the floor's own command line: the trace
exec(compile(floor.replace("{reader}", "pass"), "floor", "exec"))
best = {}
for name, stmt in readers.items():
    try:
        exec(stmt)
    except ImportError:
        continue
    runs = []
    for _ in range(3):
        t = time.perf_counter(); exec(stmt); runs.append(time.perf_counter() - t)
    best[name] = min(runs)
print(min(best, key=best.get))
"""

IN_PROCESS = ("ours in process", "HTA in process")  # compared with each other, not with the whole processes
HTA, OURS, FLOOR_NAME = "HTA 0.5 cold", "ours cold", "floor"


def measure(cmd: list[str], env=None, in_process: bool = False) -> dict:
    """The command's figures; `in_process`: wall and CPU time are the work it timed itself (imports excluded)."""
    out = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True, env=env, cwd=REPO)
    result = json.loads(out.stdout)
    if in_process:
        work = json.loads(result["last_line"])
        result.update(wall_s=work["work_s"], cpu_s=work["work_cpu_s"])
    return result


def sixteen_ranks(folder: Path) -> Path:
    """16 ranks: sampled_rank0/1 alternately, each with its own distributedInfo.rank."""
    docs = [json.loads(gzip.decompress((TRACES / f"sampled_rank{i}.pt.trace.json.gz").read_bytes())) for i in (0, 1)]
    folder.mkdir()
    for r in range(16):
        doc = docs[r % 2]
        doc["distributedInfo"] = {**doc.get("distributedInfo", {}), "rank": r, "world_size": 16}
        (folder / f"rank{r}.pt.trace.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode(), 6))
    return folder


def floor_command(trace: Path) -> tuple[list[str], str]:
    """(the floor's command line, the reader it uses): the fastest generic JSON reader installed for this trace."""
    pick = subprocess.run([sys.executable, "-c", PICK_READER, FLOOR, json.dumps(READERS), str(trace)],
                          capture_output=True, text=True, check=True, cwd=REPO)
    reader = pick.stdout.strip()
    return [sys.executable, "-c", FLOOR.replace("{reader}", READERS[reader]), str(trace)], reader


def bench(target: Path, work: Path, repeat: int, hta_python: Path) -> tuple[dict, dict]:
    """({contender: [run figures]}, notes) for one trace or folder, each contender on a private folder of symlinks."""
    home = work / f"{target.name}-{len(list(work.iterdir()))}"
    home.mkdir()
    files = sorted(target.glob("*.json*")) if target.is_dir() else [target]
    for f in files:
        os.symlink(f.resolve(), home / f.name)
    arg = str(home) if target.is_dir() else str(home / target.name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(work / "xdg"), PYTHONPYCACHEPREFIX=str(work / "pycache"))
    cold = {**env, "SAGELAUNCH_PROFILE_CACHE": "0"}
    ours = [sys.executable, "-m", "sagelaunch.profiler.cli", "analyze", arg, "--json"]
    contenders = {OURS: (ours, cold)}
    if shutil.which("taskset") and len(os.sched_getaffinity(0)) > 1:
        contenders["ours cold, 1 core"] = (["taskset", "-c", str(min(os.sched_getaffinity(0))), *ours], cold)
    subprocess.run(ours, env=env, cwd=REPO, stdout=subprocess.DEVNULL, check=True)  # leaves the cache
    contenders["ours warm"] = (ours, env)
    contenders["sagelaunch CLI cold"] = ([sys.executable, "-m", "sagelaunch.cli", "profile", "analyze", arg, "--json"],
                                         cold)
    contenders[IN_PROCESS[0]] = ([sys.executable, "-c", OURS_IN_PROCESS, arg], cold)
    notes = {}
    if not target.is_dir():
        cmd, notes["reader"] = floor_command(home / target.name)
        contenders[FLOOR_NAME] = (cmd, env)
    if hta_python.exists():
        contenders[HTA] = ([str(hta_python), "-c", HTA_SCRIPT, str(home)], env)
        contenders[IN_PROCESS[1]] = ([str(hta_python), "-c", HTA_IN_PROCESS, str(home)], env)
    for cmd, e in contenders.values():  # untimed: bytecode compiled, files in the page cache
        subprocess.run(cmd, env=e, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs: dict[str, list[dict]] = {k: [] for k in contenders}
    for _ in range(repeat):
        for name, (cmd, e) in contenders.items():
            runs[name].append(measure(cmd, e, in_process=name in IN_PROCESS))
    return runs, notes


def paired(runs: dict, num: str, den: str, key: str = "wall_s") -> float | None:
    """The median over runs i of runs[num][i] / runs[den][i] (None when either is missing)."""
    if num not in runs or den not in runs:
        return None
    return statistics.median(a[key] / b[key] for a, b in zip(runs[num], runs[den]))


def summary_row(rs: list[dict]) -> tuple[float, float, float, int]:
    return (statistics.median(r["wall_s"] for r in rs), statistics.median(r["cpu_s"] for r in rs),
            max(r["peak_mb"] for r in rs), max(rs, key=lambda r: abs(r["rc"]))["rc"])


def default_targets(work: Path) -> list[Path]:
    traces = sorted((f for folder in TRACE_FOLDERS for f in folder.glob("*.json.gz")), key=lambda f: f.stat().st_size)
    return [*traces, sixteen_ranks(work / "16-ranks")]


def report_targets(results: list[tuple[Path, dict, dict]]) -> None:
    """Per trace: ours cold vs HTA cold and vs the floor (paired medians, wall and CPU); then the medians over the
    traces and the targets (wall: what a user waits for; CPU: less sensitive to other load on the machine)."""
    print(f"\n{'cold, paired medians':<44}{'ours s':>7}{'HTA s':>7}{'floor s':>8}{'HTA/ours':>9}{'cpu':>6}"
          f"{'ours/floor':>11}{'cpu':>6}{'HTA/floor':>10}  reader")
    rows = []
    for target, runs, notes in results:
        ratios = (paired(runs, HTA, OURS), paired(runs, HTA, OURS, "cpu_s"), paired(runs, OURS, FLOOR_NAME),
                  paired(runs, OURS, FLOOR_NAME, "cpu_s"), paired(runs, HTA, FLOOR_NAME))
        med = [statistics.median(r["wall_s"] for r in runs[k]) if k in runs else float("nan")
               for k in (OURS, HTA, FLOOR_NAME)]
        size = sum(p.stat().st_size for p in (target.glob("*.json*") if target.is_dir() else [target]))
        big = target.is_file() and size >= HEADLINE_GZ_BYTES
        label = f"{target.name.removesuffix('.pt.trace.json.gz')[:28]} ({size / 1e6:.2f} MB gz){' *' if big else ''}"
        cells = "".join(f"{'' if r is None else f'{r:.2f}x' if i in (2, 3) else f'{r:.1f}x':>{w}}"
                        for i, (r, w) in enumerate(zip(ratios, (9, 6, 11, 6, 10))))
        print(f"{label:<44}{med[0]:>7.3f}{med[1]:>7.3f}{med[2]:>8.3f}{cells}  {notes.get('reader', '')}")
        rows.append((big, ratios))
    for title, chosen in (("* traces of 0.7 MB gz and up", [r for big, r in rows if big]),
                          ("every trace and folder", [r for _, r in rows])):
        for kind, h_i, f_i in (("wall", 0, 2), ("cpu", 1, 3)):
            hs = [r[h_i] for r in chosen if r[h_i] is not None]
            fs = [r[f_i] for r in chosen if r[f_i] is not None]
            if hs:
                floors = [r[4] for r in chosen if r[4] is not None]
                print(f"{title}, {kind}: HTA/ours cold median {statistics.median(hs):.1f}x (slowest {min(hs):.1f}x, "
                      f"n={len(hs)})" + (f"; ours/floor median {statistics.median(fs):.2f}x (worst {max(fs):.2f}x)"
                                          if fs else "")
                      + (f"; HTA/floor (wall) median {statistics.median(floors):.1f}x" if floors else ""))
            if hs and title.startswith("*"):
                print(f"  targets ({kind}): median >= 10x HTA: {'met' if statistics.median(hs) >= 10 else 'NOT met'}; "
                      f"every trace >= 6x: {'met' if min(hs) >= 6 else 'NOT met'}; ours <= 2x the floor: "
                      f"{'met' if fs and max(fs) <= 2 else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", type=Path,
                    help="traces or folders (default: every real GPU trace of tests/data + 16 ranks)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--folder-repeat", type=int, default=1, help="runs for the 16-rank folder (HTA takes ~30 s)")
    ap.add_argument("--hta-python", type=Path, default=REPO / ".venv-hta" / "bin" / "python")
    ap.add_argument("--phases", action="store_true", help="where a cold run's time goes, per trace, instead")
    args = ap.parse_args()
    if args.phases:
        from scripts.bench_analysis_phases import print_phases

        with tempfile.TemporaryDirectory(prefix="bench-analysis-") as tmp:
            print_phases([t for t in (args.targets or default_targets(Path(tmp))) if t.is_file()], args.repeat)
        return
    if not args.hta_python.exists():
        print(f"(no HTA environment at {args.hta_python}; create it as scripts/make_hta_fixtures.py says)")
    with tempfile.TemporaryDirectory(prefix="bench-analysis-") as tmp:
        work = Path(tmp)
        targets = args.targets or default_targets(work)
        print(f"{'trace':<34}{'contender':<21}{'wall s':>8}{'cpu s':>8}{'peak MB':>9}{'rc':>4}"
              f"{'HTA/ours wall':>15}{'cpu':>7}{'memory':>8}")
        results = []
        for target in targets:
            repeat = args.folder_repeat if target.is_dir() else args.repeat
            runs, notes = bench(target, work, repeat, args.hta_python)
            results.append((target, runs, notes))
            for name, rs in runs.items():
                wall, cpu, peak, rc = summary_row(rs)
                ratio = ""
                hta = HTA if name not in IN_PROCESS else IN_PROCESS[1]
                if hta in runs and name not in (HTA, IN_PROCESS[1], FLOOR_NAME):
                    ratio = (f"{paired(runs, hta, name):>14.1f}x{paired(runs, hta, name, 'cpu_s'):>6.1f}x"
                             f"{peak / summary_row(runs[hta])[2]:>7.2f}x")
                print(f"{target.name[:33]:<34}{name:<21}{wall:>8.3f}{cpu:>8.3f}{peak:>9.1f}{rc:>4}{ratio}")
        report_targets(results)


if __name__ == "__main__":
    main()
