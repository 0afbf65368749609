"""The timeline is linear in threads as in events (issue 32): building it for N one-event threads against N events
on four threads, the same number of events either way.

    python scripts/bench_timeline_threads.py [--events 100000] [--repeats 3]

Prints the median seconds of each build (the payload the pages embed, from the loaded profile) and their ratio;
before the fix the per-thread build was quadratic (100,000 one-event threads: minutes).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.timeline.payload import to_payload
from sagelaunch.profiler.timeline.model import build_timeline


def trace(path: Path, events: int, threads: int) -> Path:
    rows = [{"ph": "X", "cat": "cpu_op", "name": f"op{i % 5}", "pid": 1, "tid": 1 + i % threads, "ts": 1000 + 3 * i,
             "dur": 2} for i in range(events)]
    path.write_text(json.dumps({"traceEvents": rows}))
    return path


def build_seconds(path: Path, repeats: int) -> float:
    profile = load_profile(path)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        to_payload(build_timeline(profile))
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        few = build_seconds(trace(Path(scratch, "few.pt.trace.json"), args.events, 4), args.repeats)
        many = build_seconds(trace(Path(scratch, "many.pt.trace.json"), args.events, args.events), args.repeats)
    print(f"{args.events:,} events on 4 threads: {few:.3f} s; on {args.events:,} one-event threads: {many:.3f} s; "
          f"ratio {many / few:.1f}x")


if __name__ == "__main__":
    main()
