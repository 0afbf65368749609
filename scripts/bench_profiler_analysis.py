"""Analysis speed and peak memory: `sagelaunch profile analyze --json` vs HTA 0.5, side by side in one run.

Both are measured from process start to results printed, each in a fresh process (median of --repeat runs,
interleaved); we report wall time and CPU time (user+sys, less sensitive to other load on the machine); peak
memory is the child's max RSS. HTA runs in its own environment (.venv-hta, see scripts/make_hta_fixtures.py):
TraceAnalysis load + get_temporal_breakdown + get_gpu_kernel_breakdown + get_cuda_kernel_launch_stats.

    .venv/bin/python scripts/bench_profiler_analysis.py [TRACE] [--repeat 3] [--hta-python .venv-hta/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = REPO / "tests" / "data" / "traces" / "v100_rank0.pt.trace.json.gz"

HTA_SCRIPT = """
import logging, sys
logging.disable(logging.CRITICAL)
from hta.trace_analysis import TraceAnalysis
a = TraceAnalysis(trace_dir=sys.argv[1])
tb = a.get_temporal_breakdown(visualize=False)
kb = a.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
ls = a.get_cuda_kernel_launch_stats(visualize=False)
print(tb.to_json()); print(kb[0].to_json()); print({r: len(v) for r, v in ls.items()})
"""

# Runs one command and reports its wall time and its own peak RSS (the wrapper has no other children).
MEASURE = """
import resource, subprocess, sys, time, json
t = time.perf_counter()
p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
wall = time.perf_counter() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": p.returncode, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_mb": ru.ru_maxrss / 1024,
                  "out_bytes": len(p.stdout)}))
"""


def measure(cmd: list[str], env=None) -> dict:
    out = subprocess.run([sys.executable, "-c", MEASURE, *cmd], capture_output=True, text=True, env=env, cwd=REPO)
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?", type=Path, default=DEFAULT_TRACE)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--hta-python", type=Path, default=REPO / ".venv-hta" / "bin" / "python")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    contenders = {
        "sagelaunch profile analyze --json": [sys.executable, "-m", "sagelaunch.cli", "profile", "analyze",
                                              str(args.trace), "--json"],
        "python -m profiler.cli analyze --json": [sys.executable, "-m", "profiler.cli", "analyze", str(args.trace),
                                                  "--json"],
    }
    tmp = tempfile.TemporaryDirectory()
    if args.hta_python.exists():
        os.symlink(args.trace.resolve(), Path(tmp.name) / args.trace.name)
        contenders["HTA 0.5 (load + 3 analyses)"] = [str(args.hta_python), "-c", HTA_SCRIPT, tmp.name]
    else:
        print(f"(no HTA environment at {args.hta_python}; create it as scripts/make_hta_fixtures.py says)")
    results: dict[str, list[dict]] = {k: [] for k in contenders}
    for _ in range(args.repeat):  # interleaved, so load on the machine hits both alike
        for name, cmd in contenders.items():
            results[name].append(measure(cmd, env))
    print(f"trace: {args.trace} ({args.trace.stat().st_size / 1e6:.1f} MB on disk)")
    print(f"{'contender':<40}{'wall s (median)':>16}{'cpu s (median)':>15}{'peak MB':>10}{'rc':>4}")
    summary = {}
    for name, runs in results.items():
        wall = statistics.median(r["wall_s"] for r in runs)
        cpu = statistics.median(r["cpu_s"] for r in runs)
        peak = max(r["peak_mb"] for r in runs)
        summary[name] = (wall, cpu, peak)
        print(f"{name:<40}{wall:>16.3f}{cpu:>15.3f}{peak:>10.1f}{runs[-1]['rc']:>4}")
    hta = summary.get("HTA 0.5 (load + 3 analyses)")
    if hta:
        for name in list(contenders)[:2]:
            wall, cpu, peak = summary[name]
            print(f"{name}: {hta[0] / wall:.1f}x faster than HTA (wall), {hta[1] / cpu:.1f}x (cpu), "
                  f"peak memory {peak / hta[2]:.2f}x HTA's")


if __name__ == "__main__":
    main()
