"""Large logs of a local job: a 1-process job prints --mb MB; `fit()` waiting with its logs streamed against `fit()`
waiting without, side by side (does the live view keep up?), and `sagelaunch jobs logs` of the stored log: wall
time and peak RSS of each reader against the log's size.

    python scripts/bench_local_logs.py [--mb 100]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHATTY = """import sys
line = "x" * 99 + "\\n"
for _ in range(int(sys.argv[1]) * 10_486 // 1000):  # 1,000 lines of 100 bytes: 100,000 bytes per write
    sys.stdout.write(line * 1000)
"""
FIT = """import sys
from sagelaunch.estimators import PyTorch
PyTorch(entry_point=sys.argv[1], instance_type="local", framework_version="2.8.0",
        hyperparameters={}).fit(logs=sys.argv[2] == "logs", job_name=sys.argv[3])
"""
LOGS = """import sys
from sagelaunch.cli import main
sys.argv = ["sagelaunch", "jobs", "logs", sys.argv[1]]
try:
    main()
except SystemExit as end:
    assert not end.code, end.code
"""
REPORT = ("\nimport json, resource, sys\nsys.stdout.flush()\n"
          "print(json.dumps({'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), file=sys.stderr)")


def run(code: str, *args: str) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of `code` in a fresh Python, its stdout to /dev/null."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code + REPORT, *args], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=True, cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    return time.perf_counter() - start, json.loads(done.stderr.strip().splitlines()[-1])["rss_mb"]


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SAGELAUNCH_HOME"] = str(Path(tmp, "home"))  # the benchmark's jobs stay out of yours
        script = Path(tmp, "chatty.py")
        script.write_text(CHATTY.replace("sys.argv[1]", str(args.mb)))
        quiet, _ = run(FIT, str(script), "quiet", "bench-logs-quiet")
        streamed, fit_rss = run(FIT, str(script), "logs", "bench-logs-streamed")
        from sagelaunch.launcher.local import registry

        log = Path(registry.get("bench-logs-streamed")["JobDir"], "logs", "job.log")
        size = log.stat().st_size / 2**20
        stored = sum(p.stat().st_size for p in log.parent.rglob("*") if p.is_file()) / 2**20
        read, logs_rss = run(LOGS, "bench-logs-streamed")
    print(f"job log                      : {size:.0f} MB, {stored:.0f} MB stored in logs/ ({stored / size:.2f}×)")
    print(f"fit() waiting, logs streamed : {streamed:.1f} s, peak RSS {fit_rss:.0f} MB")
    print(f"fit() waiting, no logs       : {quiet:.1f} s")
    print(f"streamed / quiet             : {streamed / quiet:.2f}  (keeps up: close to 1)")
    print(f"sagelaunch jobs logs         : {read:.1f} s, peak RSS {logs_rss:.0f} MB")
    return {"size_mb": size, "stored_ratio": stored / size, "streamed_s": streamed, "quiet_s": quiet,
            "fit_rss_mb": fit_rss, "logs_s": read, "logs_rss_mb": logs_rss}


if __name__ == "__main__":
    main()
