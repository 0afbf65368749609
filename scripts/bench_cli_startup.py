"""Benchmark: how long `sagelaunch --help` and `sagelaunch validate JOB.yaml` take from a cold process.

    python scripts/bench_cli_startup.py [--repeats 7] [--against OTHER_CHECKOUT]

Each command runs in a fresh `python -m sagelaunch` process; the figures are medians of the wall time and of the
process's CPU time (user + system: steadier than wall time on a busy machine). With --against, the same commands run
from another checkout of the project (e.g. `git worktree add /tmp/base main`), alternating with this one, and the
paired ratio this/other is printed per command (median of the per-pair ratios). Printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
JOB = """framework: pytorch
entry_point: train.py
source_dir: src
role: arn:aws:iam::123456789012:role/SageMakerRole
framework_version: '2.0.0'
py_version: py310
instance_type: ml.p3.2xlarge
region: us-west-2
hyperparameters: {epochs: 2}
"""


def run_once(checkout: Path, args: list[str], home: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `python -m sagelaunch ARGS` run from `checkout`."""
    env = dict(os.environ, PYTHONPATH=str(checkout), HOME=home, COLUMNS="100")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "sagelaunch", *args], env=env, cwd=home, capture_output=True,
                         text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args)} from {checkout} failed:\n{out.stderr[-2000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--against", type=Path, help="another checkout to compare with (paired, alternating runs)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        (Path(home) / "src").mkdir()
        (Path(home) / "src" / "train.py").write_text("print('train')\n")
        (Path(home) / "job.yaml").write_text(JOB)
        checkouts = [ROOT] + ([opts.against.resolve()] if opts.against else [])
        for label, args in (("sagelaunch --help", ["--help"]), ("sagelaunch validate job.yaml", ["validate", "job.yaml"])):
            runs: dict[Path, list[tuple[float, float]]] = {c: [] for c in checkouts}
            for _ in range(opts.repeats):
                for checkout in checkouts:
                    runs[checkout].append(run_once(checkout, args, home))
            for checkout in checkouts:
                walls, cpus = zip(*runs[checkout])
                print(f"{label:<30} {checkout.name:<16} wall {statistics.median(walls) * 1000:7.0f} ms   "
                      f"CPU {statistics.median(cpus) * 1000:7.0f} ms")
            if opts.against:
                mine, other = runs[ROOT], runs[checkouts[1]]
                wall_ratio = statistics.median(a[0] / b[0] for a, b in zip(mine, other))
                cpu_ratio = statistics.median(a[1] / b[1] for a, b in zip(mine, other))
                print(f"{label:<30} this/other: wall ×{wall_ratio:.2f}, CPU ×{cpu_ratio:.2f}")


if __name__ == "__main__":
    main()
