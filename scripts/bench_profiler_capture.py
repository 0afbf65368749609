"""Capture cost with CPU operators: peak RSS and wall time vs the unprofiled run, at a short and a long run.

The loop of issue 16: 6 Linear(256, 256) layers, batch 16, SGD, one thread, each step annotated `step_N`. Each mode
runs in a fresh process; peak RSS is that process's VmHWM plus the peak of the profile's output process (the
helper that writes the files, profiler/output_process.py), as both are alive at once. The wall time includes
stop_profiling(), i.e. the last window's conversion and write; CPU time is the training process's only. Modes are
interleaved round by round so that machine noise hits all alike.
  unprofiled           the same loop, the profiler never started
  ours (default)       start_profiling() at default settings
  ours (ops all)       Config(record_cpu_ops=True, cpu_ops_steps=1, cpu_ops_every_steps=1): Kineto records the
                       operators of every step (the old full recording); windows rotate every SMPFileRotationSteps
                       steps (default 50), converted and written on the writer thread
  ours (ops K/N)       Config(record_cpu_ops=True): operators in the default duty cycle, cpu_ops_steps (K) of every
                       cpu_ops_every_steps (N) steps; --duty K N overrides it
  ours (…, in proc)    ops all / ops K/N with SAGELAUNCH_PROFILER_OUTPUT_PROCESS=0: windows read and written in
                       the training process (on its writer thread) instead of the output process
  torch (sched K/N)    torch.profiler with schedule(wait=N-K-1, warmup=1, active=K) and tensorboard_trace_handler:
                       the same duty cycle done with torch alone (Chrome JSON per cycle)

    .venv/bin/python scripts/bench_profiler_capture.py [--steps 100 10000] [--rounds 1] [--duty 4 100]
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
sys.path.insert(0, str(REPO))

LOOP = r"""
import json, os, re, sys, time
mode, steps, out, k, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
import torch
torch.set_num_threads(1)
torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(6)])
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(16, 256)
import sagelaunch.profiler as smprof
from sagelaunch.profiler.output_process import ProfileOutput
helper_peak = []
_close = ProfileOutput.close
def close_measured(self):  # the helper has answered every call: its peak so far is its peak
    if self.pid:
        helper_peak.append(int(re.search(r"VmHWM:\s+(\d+)", open(f"/proc/{self.pid}/status").read()).group(1)) / 1024)
    _close(self)
ProfileOutput.close = close_measured
tp = None
t, cpu = time.perf_counter(), time.process_time()
if mode.startswith("ours"):
    duty = {"ours (ops all)": (1, 1), "ours (ops K/N)": (k, n), "ours (K/N, in proc)": (k, n),
            "ours (all, in proc)": (1, 1)}.get(mode)
    smprof.configure(smprof.Config(output_dir=out, host="algo-1", rank=0, record_cpu_ops=True if duty else None,
                                   cpu_ops_steps=duty and duty[0], cpu_ops_every_steps=duty and duty[1]))
    smprof.start_profiling()
elif mode.startswith("torch"):
    tp = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=torch.profiler.schedule(wait=n - k - 1, warmup=1, active=k),
                                on_trace_ready=torch.profiler.tensorboard_trace_handler(out))
    tp.start()
for i in range(steps):
    with smprof.annotate(f"step_{i}"):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        opt.zero_grad()
    if tp is not None:
        tp.step()
smprof.stop_profiling()
if tp is not None:
    tp.stop()
wall, cpu = time.perf_counter() - t, time.process_time() - cpu
peak = int(re.search(r"VmHWM:\s+(\d+)", open("/proc/self/status").read()).group(1)) / 1024
helper = sum(helper_peak)
files = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs if f.startswith("trace-") or ".pt.trace" in f]
print(json.dumps({"wall": wall, "cpu": cpu, "peak": peak + helper, "helper": helper, "files": len(files),
                  "bytes": sum(os.path.getsize(f) for f in files)}))
"""

MODES = ("unprofiled", "ours (default)", "ours (ops all)", "ours (ops K/N)", "ours (K/N, in proc)", "ours (all, in proc)",
         "torch (sched K/N)")


def run(mode: str, steps: int, work: Path, duty: tuple[int, int]) -> dict:
    out = tempfile.mkdtemp(dir=work)
    from sagelaunch.profiler.output_process import PROCESS_ENV

    env = {**os.environ, "PYTHONPATH": str(REPO), PROCESS_ENV: "0" if "in proc" in mode else "1"}
    env.pop("SAGELAUNCH_PROFILER_CONFIG", None)
    proc = subprocess.run([sys.executable, "-c", LOOP, mode, str(steps), out, *map(str, duty)], capture_output=True, text=True,
                          env=env, cwd=REPO)
    if proc.returncode:
        raise SystemExit(f"{mode} at {steps} steps failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, nargs="+", default=[100, 10_000])
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    ap.add_argument("--duty", type=int, nargs=2, metavar=("K", "N"), default=None,
                    help="operators in K of every N steps (default: the profiler's cpu_ops_steps/cpu_ops_every_steps)")
    args = ap.parse_args()
    from sagelaunch.jobspec.contract import DEFAULT_CPU_OPS_EVERY_STEPS, DEFAULT_CPU_OPS_STEPS

    duty = tuple(args.duty or (DEFAULT_CPU_OPS_STEPS, DEFAULT_CPU_OPS_EVERY_STEPS))
    if not 1 <= duty[0] < duty[1]:
        raise SystemExit(f"--duty {duty[0]} {duty[1]}: K must be ≥ 1 and below N (torch's schedule needs N > K)")
    print(f"K/N = {duty[0]} of every {duty[1]} steps")
    with tempfile.TemporaryDirectory(prefix="bench-capture-") as tmp:
        results = {(m, s): [] for m in args.modes for s in args.steps}
        for _ in range(args.rounds):
            for steps in args.steps:
                for mode in args.modes:
                    results[(mode, steps)].append(run(mode, steps, Path(tmp), duty))
    print(f"{'steps':>7}  {'mode':<19}{'wall s':>8}{'x':>7}{'x range':>12}{'cpu s':>8}{'x':>7}{'peak MB':>9}{'x':>7}"
          f"{'x range':>12}{'files':>7}{'KB/step':>9}")
    for steps in args.steps:
        rows = {m: results[(m, steps)] for m in args.modes}
        med = {m: {k: statistics.median(r[k] for r in rows[m]) for k in ("wall", "cpu", "peak")} for m in args.modes}
        base = med.get("unprofiled")
        for mode in args.modes:
            m, last = med[mode], rows[mode][-1]
            ratio = {k: (f"{m[k] / base[k]:>6.2f}x" if base else f"{'-':>7}") for k in m}
            spread = {}
            for k in ("wall", "peak"):  # each round against the same round's unprofiled run
                if base:
                    rs = [r[k] / u[k] for r, u in zip(rows[mode], rows["unprofiled"])]
                    spread[k] = f"{min(rs):.2f}-{max(rs):.2f}x".rjust(12)
                else:
                    spread[k] = f"{'-':>12}"
            print(f"{steps:>7}  {mode:<19}{m['wall']:>8.2f}{ratio['wall']}{spread['wall']}{m['cpu']:>8.2f}{ratio['cpu']}"
                  f"{m['peak']:>9.0f}{ratio['peak']}{spread['peak']}{last['files']:>7}{last['bytes'] / 1024 / steps:>9.1f}")

if __name__ == "__main__":
    main()
