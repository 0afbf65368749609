"""The training script of gpu_check.py's profiled job (a local sagelaunch job; `local_gpu` where CUDA exists).

RoBERTa classifier steps (bench_roberta's model; bf16 autocast + fused AdamW on a GPU, fp32 on CPU), each step's
batch copied from pinned host memory as a data loader would. Rounds of unprofiled and profiled steps alternate
(our profiler, started and stopped by the script as SageMaker Profiler scripts do), so machine noise hits both
alike; the same annotated step (bench_profiler_overhead's) runs in both. Then a few steps under plain torch.profiler with CPU and CUDA activity,
exported as a Kineto trace for the HTA comparison. Writes OUT_DIR/timings.json and OUT_DIR/kineto/*.pt.trace.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

import sagelaunch.profiler as smprof
from bench_profiler_overhead import annotated_step
from bench_roberta import build_model


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", default="tiny")
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=3, help="timed steps per round and mode")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--kineto_steps", type=int, default=2)
    parser.add_argument("--out_dir", required=True)
    args = parser.parse_args()

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    model = build_model(args.size, args.seq, device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5, fused=True if cuda else None)
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(3, model.config.vocab_size, (args.batch, args.seq), generator=g)
    labels = torch.randint(0, 3, (args.batch,), generator=g)
    if cuda:
        ids, labels = ids.pin_memory(), labels.pin_memory()

    autocast = torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=cuda)

    def step(n: int) -> None:
        x, y = ids.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        annotated_step(f"step_{n}", model, optimizer, x, y, autocast)
        if cuda:
            torch.cuda.synchronize()  # the step's GPU work belongs to its step time

    n = 0
    for _ in range(3):  # warm-up: allocator, cuBLAS handles, autotuning
        n += 1
        step(n)
    times: dict[str, list[float]] = {"unprofiled": [], "profiled": []}
    for _ in range(args.rounds):
        for mode in ("unprofiled", "profiled"):
            if mode == "profiled":
                smprof.start_profiling()
            for _ in range(args.steps):
                n += 1
                start = time.perf_counter()
                step(n)
                times[mode].append(time.perf_counter() - start)
            if mode == "profiled":
                smprof.stop_profiling()  # the window's write is outside the step times

    out = Path(args.out_dir)
    (out / "kineto").mkdir(parents=True, exist_ok=True)
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(args.kineto_steps):
            n += 1
            step(n)
            prof.step()
    trace = out / "kineto" / "rank0.pt.trace.json"
    prof.export_chrome_trace(str(trace))
    medians = {mode: statistics.median(v) for mode, v in times.items()}
    (out / "timings.json").write_text(json.dumps({
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "size": args.size, "seq": args.seq, "batch": args.batch, "steps_per_mode": len(times["profiled"]),
        "step_s": times, "median_step_s": medians, "kineto_trace": str(trace), "kineto_steps": args.kineto_steps,
    }, indent=1))
    print(f"gpu_check job: {n} steps on {device}; median step unprofiled {medians['unprofiled'] * 1e3:.2f} ms, "
          f"profiled {medians['profiled'] * 1e3:.2f} ms", flush=True)


if __name__ == "__main__":
    main()
