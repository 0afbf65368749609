"""How long a local job's channel takes to lay out, and what it costs on disk, per strategy (issue 32).

    python scripts/bench_channels.py [--mib 512] [--files 64] [--repeats 3]

Builds a folder of --mib MiB in --files files, then lays it out as a job's channel each way this machine allows:
a full copy, a copy-on-write clone (FICLONE: btrfs, XFS with reflink, ...) and a read-only bind mount (root). Prints
the median seconds, the bytes newly written and the ratio to a full copy.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from sagelaunch.launcher.local import channel_views


def used_bytes(folder: Path) -> int:
    stats = os.statvfs(folder)
    return (stats.f_blocks - stats.f_bfree) * stats.f_frsize


def lay_out(strategy: str, source: Path, target: Path) -> None:
    if strategy == "read-only":
        target.mkdir()
        subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                        f"mount --bind -o ro '{source}' '{target}' && ls '{target}' >/dev/null"], check=True)
    else:
        channel_views.copy_view(source, target, clone=strategy == "clone")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=512)
    parser.add_argument("--files", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where to build the folder (its filesystem decides)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as scratch:
        source = Path(scratch, "channel")
        source.mkdir()
        block = os.urandom(1024 * 1024)
        for index in range(args.files):
            with open(source / f"part-{index}.bin", "wb") as handle:
                for _ in range(max(1, args.mib // args.files)):
                    handle.write(block)
        total, _ = channel_views.tree_bytes(source)
        strategies = ["copy"]
        if channel_views.can_clone(source, Path(scratch)):
            strategies.append("clone")
        if channel_views.can_mount():
            strategies.append("read-only")
        print(f"channel: {total / 2**20:.0f} MiB in {args.files} files; strategies here: {', '.join(strategies)}")
        medians = {}
        for strategy in strategies:
            times, written = [], []
            for repeat in range(args.repeats):
                target = Path(scratch, f"{strategy}-{repeat}")
                os.sync()
                before, started = used_bytes(Path(scratch)), time.perf_counter()
                lay_out(strategy, source, target)
                os.sync()
                times.append(time.perf_counter() - started)
                written.append(max(0, used_bytes(Path(scratch)) - before))
                shutil.rmtree(target)
            medians[strategy] = statistics.median(times)
            print(f"{strategy:>9}: {medians[strategy]:.3f} s, {statistics.median(written) / 2**20:.0f} MiB written, "
                  f"{medians[strategy] / medians['copy']:.3f}x the copy's time")


if __name__ == "__main__":
    main()
