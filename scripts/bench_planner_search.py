"""How long `search` takes over every layout of a 175B GPT (96 layers, h 12288) on 120 ml.p4d.24xlarge (960 A100s),
global batch 1920 at sequence 2048: the median of several fresh runs (a fresh ModelShape each, so no memo is
reused), and how many layouts it considered and found to fit. The issue's target: under one second.

    python scripts/bench_planner_search.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

from sagelaunch.planner.models import model_from_dims
from sagelaunch.planner.search import search


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    times = []
    for _ in range(args.repeats):
        shape = model_from_dims("gpt2", layers=96, hidden=12288, heads=96, vocab=51200, seq_len=2048)
        start = time.perf_counter()
        result = search(shape, "ml.p4d.24xlarge", 120, global_batch=1920, top=1000)
        times.append(time.perf_counter() - start)
    print(f"175B on 120 × ml.p4d.24xlarge: {result.considered} layouts considered, {len(result.rows)} fit; "
          f"search median {statistics.median(times):.3f} s (min {min(times):.3f}, max {max(times):.3f}, "
          f"{args.repeats} runs)")
    print("best:", result.why)


if __name__ == "__main__":
    main()
