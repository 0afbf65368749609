"""Analysis speed and peak memory: `profile analyze --json` vs HTA 0.5, side by side in one run, on EVERY trace in
tests/data/traces and on a 16-rank folder (made from the two sampled ranks in a temporary folder).

Each contender runs in a fresh process, from process start to results printed (median of --repeat runs,
interleaved so that load on the machine hits all alike, after one untimed run each); wall time, CPU time
(user+sys of the process and its workers, less sensitive to other load) and peak RSS (of the largest process: the
analysis or one of its workers). Compiled bytecode is kept for both, as an installed package has it (a
PYTHONDONTWRITEBYTECODE in the caller's environment would make our uninstalled sources compile on every run).
HTA runs in its own environment (.venv-hta, see scripts/make_hta_fixtures.py): TraceAnalysis load +
get_temporal_breakdown + get_gpu_kernel_breakdown + get_cuda_kernel_launch_stats. Ours runs twice per trace:
cold (SAGELAUNCH_PROFILE_CACHE=0: the JSON is parsed; a big trace in chunks over the cores), cold on one core
(taskset: what a trace costs without worker processes) and warm (the parsed columns cached beside the trace by
an earlier run, as for a second analyze/report/ui of the same trace). "in process" rows time only the work, in a
fresh process that has already imported everything it needs (ours: the analysis modules; HTA: TraceAnalysis), from
the call to the results as JSON (ours cold; HTA's load + the three analyses); they are compared with each other.

    .venv/bin/python scripts/bench_profiler_analysis.py [TRACE_OR_FOLDER ...] [--repeat 3] [--folder-repeat 1]
                                                        [--hta-python .venv-hta/bin/python]
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
TRACES = REPO / "tests" / "data" / "traces"

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


IN_PROCESS = ("ours in process", "HTA in process")  # compared with each other, not with the whole processes


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


def bench(target: Path, work: Path, repeat: int, hta_python: Path) -> dict:
    """{contender: (wall, cpu, peak MB, rc)} for one trace or folder, each in a private folder of symlinks."""
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
    contenders = {"ours cold": (ours, cold)}
    if shutil.which("taskset") and len(os.sched_getaffinity(0)) > 1:
        contenders["ours cold, 1 core"] = (["taskset", "-c", str(min(os.sched_getaffinity(0))), *ours], cold)
    subprocess.run(ours, env=env, cwd=REPO, stdout=subprocess.DEVNULL, check=True)  # leaves the cache
    contenders["ours warm"] = (ours, env)
    contenders["sagelaunch CLI warm"] = ([sys.executable, "-m", "sagelaunch.cli", "profile", "analyze", arg, "--json"],
                                         env)
    contenders[IN_PROCESS[0]] = ([sys.executable, "-c", OURS_IN_PROCESS, arg], cold)
    if hta_python.exists():
        contenders["HTA 0.5"] = ([str(hta_python), "-c", HTA_SCRIPT, str(home)], env)
        contenders[IN_PROCESS[1]] = ([str(hta_python), "-c", HTA_IN_PROCESS, str(home)], env)
    for cmd, e in contenders.values():  # untimed: bytecode compiled, files in the page cache
        subprocess.run(cmd, env=e, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    runs: dict[str, list[dict]] = {k: [] for k in contenders}
    for _ in range(repeat):
        for name, (cmd, e) in contenders.items():
            runs[name].append(measure(cmd, e, in_process=name in IN_PROCESS))
    return {name: (statistics.median(r["wall_s"] for r in rs), statistics.median(r["cpu_s"] for r in rs),
                   max(r["peak_mb"] for r in rs), rs[-1]["rc"]) for name, rs in runs.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("targets", nargs="*", type=Path, help="traces or folders (default: every test trace + 16 ranks)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--folder-repeat", type=int, default=1, help="runs for the 16-rank folder (HTA takes ~30 s)")
    ap.add_argument("--hta-python", type=Path, default=REPO / ".venv-hta" / "bin" / "python")
    args = ap.parse_args()
    if not args.hta_python.exists():
        print(f"(no HTA environment at {args.hta_python}; create it as scripts/make_hta_fixtures.py says)")
    with tempfile.TemporaryDirectory(prefix="bench-analysis-") as tmp:
        work = Path(tmp)
        targets = args.targets or [*sorted(TRACES.glob("*.json.gz")), sixteen_ranks(work / "16-ranks")]
        print(f"{'trace':<34}{'contender':<21}{'wall s':>8}{'cpu s':>8}{'peak MB':>9}{'rc':>4}"
              f"{'HTA/ours wall':>15}{'cpu':>7}{'memory':>8}")
        worst: dict[str, float] = {}
        for target in targets:
            repeat = args.folder_repeat if target.is_dir() else args.repeat
            res = bench(target, work, repeat, args.hta_python)
            for name, (wall, cpu, peak, rc) in res.items():
                ratio = ""
                hta = res.get(IN_PROCESS[1] if name in IN_PROCESS else "HTA 0.5")
                if hta and name not in ("HTA 0.5", IN_PROCESS[1]):
                    ratio = f"{hta[0] / wall:>14.1f}x{hta[1] / cpu:>6.1f}x{peak / hta[2]:>7.2f}x"
                    worst[name] = min(worst.get(name, 1e9), hta[0] / wall)
                print(f"{target.name[:33]:<34}{name:<21}{wall:>8.3f}{cpu:>8.3f}{peak:>9.1f}{rc:>4}{ratio}")
        for name, ratio in worst.items():
            print(f"slowest ratio over the targets, {name}: {ratio:.1f}x HTA's wall time")


if __name__ == "__main__":
    main()
