"""Capture cost with CPU operators: peak RSS and wall time vs the unprofiled run, at a short and a long run.

The loop of issue 16: 6 Linear(256, 256) layers, batch 16, SGD, one thread, each step annotated `step_N`. Each mode
runs in a fresh process (peak RSS is that process's VmHWM); the wall time includes stop_profiling(), i.e. the
last window's conversion and write. Modes are interleaved round by round so that machine noise hits all alike.
  unprofiled        the same loop, the profiler never started
  ours (default)    start_profiling() at default settings
  ours (+cpu ops)   Config(record_cpu_ops=True): Kineto records every operator; windows rotate every
                    SMPFileRotationSteps steps (default 50), converted and written on the writer thread

    .venv/bin/python scripts/bench_profiler_capture.py [--steps 100 10000] [--rounds 1]
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

LOOP = r"""
import json, os, re, sys, time
mode, steps, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(6)])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 256)
import profiler as smprof
t, cpu = time.perf_counter(), time.process_time()
if mode != "unprofiled":
    smprof.configure(smprof.Config(output_dir=out, host="algo-1", rank=0,
                                   record_cpu_ops=True if mode == "ours (+cpu ops)" else None))
    smprof.start_profiling()
for i in range(steps):
    with smprof.annotate(f"step_{i}"):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
smprof.stop_profiling()
wall, cpu = time.perf_counter() - t, time.process_time() - cpu
peak = int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1)) / 1024
files = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs if f.startswith("trace-")]
print(json.dumps({"wall": wall, "cpu": cpu, "peak": peak, "files": len(files),
                  "bytes": sum(os.path.getsize(f) for f in files)}))
"""

MODES = ("unprofiled", "ours (default)", "ours (+cpu ops)")


def run(mode: str, steps: int, work: Path) -> dict:
    out = tempfile.mkdtemp(dir=work)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("SAGELAUNCH_PROFILER_CONFIG", None)
    proc = subprocess.run([sys.executable, "-c", LOOP, mode, str(steps), out], capture_output=True, text=True,
                          env=env, cwd=REPO)
    if proc.returncode:
        raise SystemExit(f"{mode} at {steps} steps failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, nargs="+", default=[100, 10_000])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-capture-") as tmp:
        results = {(m, s): [] for m in args.modes for s in args.steps}
        for _ in range(args.rounds):
            for steps in args.steps:
                for mode in args.modes:
                    results[(mode, steps)].append(run(mode, steps, Path(tmp)))
    print(f"{'steps':>7}  {'mode':<17}{'wall s':>9}{'x':>7}{'cpu s':>9}{'x':>7}{'peak MB':>9}{'x':>7}"
          f"{'files':>7}{'KB/step':>9}")
    for steps in args.steps:
        med = {m: {k: statistics.median(r[k] for r in results[(m, steps)]) for k in ("wall", "cpu", "peak")}
               for m in args.modes}
        base = med.get("unprofiled")
        for mode in args.modes:
            m, last = med[mode], results[(mode, steps)][-1]
            ratio = {k: (f"{m[k] / base[k]:>6.2f}x" if base else f"{'-':>7}") for k in m}
            print(f"{steps:>7}  {mode:<17}{m['wall']:>9.2f}{ratio['wall']}{m['cpu']:>9.2f}{ratio['cpu']}"
                  f"{m['peak']:>9.0f}{ratio['peak']}{last['files']:>7}{last['bytes'] / 1024 / steps:>9.1f}")


if __name__ == "__main__":
    main()
