"""Overhead of a local job: `estimator.fit()` of a 2-process job whose script exits at once, against
`torchrun --nproc_per_node 2` of the same script — side by side, median of N runs each (target ratio ≤ 1.15).

    python scripts/bench_local_overhead.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SCRIPT = "import os\n# exits at once: what remains is the launcher's own cost\n"


def time_torchrun(script: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", str(script)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=script.parent)
    return time.perf_counter() - start


def time_fit(script: Path) -> float:
    from estimators import PyTorch

    # any supported version: a local job runs with the installed torch (and says so in one line on stderr)
    estimator = PyTorch(entry_point=str(script), instance_type="local", framework_version="2.8.0",
                        distribution={"mpi": {"enabled": True, "processes_per_host": 2}})
    start = time.perf_counter()
    estimator.fit(logs=False)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    saved_home = os.environ.get("SAGELAUNCH_HOME")
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SAGELAUNCH_HOME"] = str(Path(tmp, "home"))  # the benchmark's jobs stay out of yours
        try:
            script = Path(tmp, "exit_now.py")
            script.write_text(SCRIPT)
            time_fit(script)  # warm-up: first imports, registry creation
            fit_times, torchrun_times = [], []
            for _ in range(args.repeats):  # interleaved, so both see the same machine load
                torchrun_times.append(time_torchrun(script))
                fit_times.append(time_fit(script))
        finally:
            if saved_home is None:
                os.environ.pop("SAGELAUNCH_HOME", None)
            else:
                os.environ["SAGELAUNCH_HOME"] = saved_home
    fit, torchrun = statistics.median(fit_times), statistics.median(torchrun_times)
    print(f"torchrun --nproc_per_node 2 : median {torchrun:.3f} s  ({', '.join(f'{t:.2f}' for t in torchrun_times)})")
    print(f"estimator.fit() local, 2 proc: median {fit:.3f} s  ({', '.join(f'{t:.2f}' for t in fit_times)})")
    print(f"overhead ratio fit/torchrun  : {fit / torchrun:.3f}  (target <= 1.15)")
    return {"fit": fit, "torchrun": torchrun, "ratio": fit / torchrun}


if __name__ == "__main__":
    main()
