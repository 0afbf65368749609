"""Profiler overhead and artifact size on a CPU training benchmark, measured side by side in one run.

Tiny RoBERTa (4 layers x 256 hidden), batch 8 x 128 tokens, fused AdamW, one thread. Modes, interleaved round by
round so that machine noise hits all of them alike:
  unprofiled          the same script (annotate calls in place) with the profiler never started
  ours (default)      start_profiling() at default settings: step/Forward/Backward/Optimizer annotations,
                      utilisation monitor thread, device activity when a GPU exists (none here)
  ours (ops all)      Config(record_cpu_ops=True, cpu_ops_steps=1, cpu_ops_every_steps=1): every operator of every
                      step through Kineto as well (like torch.profiler); the old full recording
  ours (ops K/N)      Config(record_cpu_ops=True) with a duty cycle: operators in K of every N steps; the bench's
                      default is one step per round's session (K=1, N=--steps: 1 of 5), since the profiler's
                      default 4 of 200 needs 200 steps of ~1 s here; --duty K N sets it (N ≤ --steps)
  torch.profiler      torch.profiler.profile(CPU) + export_chrome_trace, every step
Step time excludes the end-of-window write (ours: Parquet; torch: Chrome JSON export), reported separately.
Per step we record wall time, the training thread's CPU time (robust when other processes load the machine) and
the whole process's CPU time (includes the monitor thread and Kineto's own threads); overheads are of medians.
"mean+write" is the mean wall time per step with the session's start and stop (the write) included: the figure
a duty cycle is judged by (its median step is an unrecorded one).

    .venv/bin/python scripts/bench_profiler_overhead.py [--rounds 4] [--steps 5] [--duty K N] [--tiny]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def build(tiny: bool):
    import torch
    from transformers import RobertaConfig, RobertaForSequenceClassification

    torch.manual_seed(0)
    if tiny:
        cfg = RobertaConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
                            vocab_size=300, max_position_embeddings=40, num_labels=2)
        seq = 16
    else:
        cfg = RobertaConfig(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024,
                            max_position_embeddings=130, num_labels=2)
        seq = 128
    model = RobertaForSequenceClassification(cfg).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    x = torch.randint(5, min(cfg.vocab_size, 1000), (8, seq))
    y = torch.randint(0, 2, (8,))
    return model, opt, x, y


def annotated_step(name: str, model, optimizer, x, y, autocast=contextlib.nullcontext()) -> None:
    """One training step of a Hugging Face classifier as SageMaker Profiler scripts annotate it: `name` (step_N)
    around Forward, Backward and Optimizer. The annotations cost nothing measurable while the profiler is off."""
    import sagelaunch.profiler as smprof

    with smprof.annotate(name):
        with smprof.annotate("Forward"), autocast:
            loss = model(input_ids=x, labels=y).loss
        with smprof.annotate("Backward"):
            loss.backward()
        with smprof.annotate("Optimizer"):
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--tiny", action="store_true", help="a very small model (keeps the script working in tests)")
    ap.add_argument("--duty", type=int, nargs=2, metavar=("K", "N"), default=None,
                    help="ours (ops K/N): operators in K of every N steps (default 1 of --steps)")
    args = ap.parse_args()
    duty = tuple(args.duty or (1, args.steps))
    if not 1 <= duty[0] <= duty[1]:
        raise SystemExit(f"--duty {duty[0]} {duty[1]}: K must be ≥ 1 and ≤ N")

    import torch

    torch.set_num_threads(1)
    import sagelaunch.profiler as smprof
    from sagelaunch.profiler.api import SMProfiler

    model, opt, x, y = build(args.tiny)

    def step(i: int) -> None:
        annotated_step(f"step_{i}", model, opt, x, y)

    for i in range(3):
        step(i)
    work = Path(tempfile.mkdtemp(prefix="bench-prof-"))
    os.environ.pop("SAGELAUNCH_PROFILER_CONFIG", None)
    modes = ["unprofiled", "ours (default)", "ours (ops all)", "ours (ops K/N)", "torch.profiler"]
    cycles = {"ours (ops all)": (1, 1), "ours (ops K/N)": duty}
    times: dict[str, list[float]] = {m: [] for m in modes}
    thread_cpu: dict[str, list[float]] = {m: [] for m in modes}
    proc_cpu: dict[str, list[float]] = {m: [] for m in modes}
    write_s: dict[str, float] = {m: 0.0 for m in modes}
    sizes: dict[str, int] = {m: 0 for m in modes}
    sessions: dict[str, float] = {m: 0.0 for m in modes}  # wall of whole sessions: start, steps, stop
    n = 0
    for r in range(args.rounds + 1):
        for mode in modes:
            out = work / f"{mode.split()[0]}-{len(mode)}-{r}"
            prof = tp = None
            t_session = time.perf_counter()
            if mode.startswith("ours"):
                SMProfiler._instance = None  # a fresh session per window
                prof = SMProfiler.instance()
                k_n = cycles.get(mode)
                prof.configure(smprof.Config(output_dir=str(out), host="algo-1", rank=0,
                                             record_cpu_ops=True if k_n else None,
                                             cpu_ops_steps=k_n and k_n[0], cpu_ops_every_steps=k_n and k_n[1]))
                prof.start_profiling()
            elif mode == "torch.profiler":
                tp = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
                tp.start()
            for i in range(args.steps):
                t, c, pc = time.perf_counter(), time.thread_time(), time.process_time()
                step(n)
                times[mode].append(time.perf_counter() - t)
                thread_cpu[mode].append(time.thread_time() - c)
                proc_cpu[mode].append(time.process_time() - pc)
                n += 1
            t = time.perf_counter()
            if prof is not None:
                prof.stop_profiling()
                sizes[mode] += sum(p.stat().st_size for p in prof.files)
            elif tp is not None:
                tp.stop()
                out.mkdir(parents=True, exist_ok=True)
                tp.export_chrome_trace(str(out / "trace.json"))
                sizes[mode] += (out / "trace.json").stat().st_size
            write_s[mode] += time.perf_counter() - t
            sessions[mode] += time.perf_counter() - t_session
        if r == 0:  # a warm-up round: first imports (pyarrow, Kineto) and first sessions are not measured
            for acc in (times, thread_cpu, proc_cpu):
                acc.update({m: [] for m in modes})
            for acc in (write_s, sizes, sessions):
                acc.update({m: 0 for m in modes})
    steps = args.rounds * args.steps
    med = {k: {m: statistics.median(v[m]) for m in modes} for k, v in
           (("wall", times), ("thread", thread_cpu), ("proc", proc_cpu))}
    print(f"ours (ops K/N): operators in {duty[0]} of every {duty[1]} steps; {args.rounds} rounds x {args.steps} steps")
    print(f"{'mode':<18}{'wall ms':>9}{'ovh':>8}{'thread cpu ms':>15}{'ovh':>8}{'proc cpu ms':>13}{'ovh':>8}"
          f"{'mean+write ms':>15}{'ovh':>8}{'write ms/step':>15}{'artifact KB/step':>18}{'vs chrome':>11}")
    chrome = sizes["torch.profiler"] / steps
    for m in modes:
        size = sizes[m] / steps
        ratio = f"{chrome / size:>10.1f}x" if size else f"{'-':>11}"
        cells = "".join(f"{med[k][m] * 1e3:>{w}.2f}{100 * (med[k][m] / med[k]['unprofiled'] - 1):>7.2f}%"
                        for k, w in (("wall", 9), ("thread", 15), ("proc", 13)))
        mean = sessions[m] / steps
        cells += f"{mean * 1e3:>15.2f}{100 * (sessions[m] / sessions['unprofiled'] - 1):>7.2f}%"
        print(f"{m:<18}{cells}{1e3 * write_s[m] / steps:>15.2f}{size / 1024:>18.1f}{ratio}")
    # Load-insensitive cross-check of the no-cpu-ops mode: its whole cost is the annotations and the monitor samples.
    from sagelaunch.profiler.system_monitor import SystemMonitor

    SMProfiler._instance = None
    prof = SMProfiler.instance()
    prof.configure(smprof.Config(output_dir=str(work / "micro"), host="algo-1", rank=0, record_cpu_ops=False))
    prof.start_profiling()
    reps = 100_000
    c = time.thread_time()
    for _ in range(reps):
        with smprof.annotate("x"):
            pass
    per_annotation = (time.thread_time() - c) / reps
    prof.stop_profiling()
    mon = SystemMonitor(work / "micro2", "algo-1", 500, 600)
    from sagelaunch.profiler.system_monitor import _Nvml

    mon._nvml = _Nvml()
    c = time.process_time()
    for _ in range(200):
        mon.sample_once()
    per_sample = (time.process_time() - c) / 200
    step_s = med["thread"]["unprofiled"]
    est = (4 * per_annotation + per_sample * step_s / 0.5) / step_s
    print(f"no-cpu-ops mode, cost model: {per_annotation * 1e6:.2f} us per annotation x 4 per step + "
          f"{per_sample * 1e6:.0f} us per 500 ms utilisation sample = {100 * est:.3f}% of a {step_s * 1e3:.0f} ms step")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
