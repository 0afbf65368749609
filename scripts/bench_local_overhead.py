"""Overhead of a local job: `estimator.fit()` of a 2-process job whose script exits at once, against
`torchrun --nproc_per_node 2` of the same script — side by side, median of N runs each (target ratio ≤ 1.15).

    python scripts/bench_local_overhead.py [--repeats 5] [--home DIR]

Each run is listed (its job name, final status, the ranks that ran, its time), so the figures can be
traced to the runs they come from; --home keeps the fit() jobs in that SAGELAUNCH_HOME for inspection.
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

# exits at once: what remains is the launcher's own cost (plus one empty file saying this rank ran)
SCRIPT = "import os, sys\nopen(os.path.join(sys.argv[-1], 'rank' + os.environ['RANK']), 'w').close()\n"


def ranks_in(marks: Path) -> list[int]:
    return sorted(int(p.name.removeprefix("rank")) for p in marks.glob("rank*"))


def run_torchrun(script: Path, marks: Path) -> dict:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", str(script),
                           "--marks", str(marks)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=script.parent)
    seconds = time.perf_counter() - start
    return {"kind": "torchrun", "seconds": seconds, "job": None, "status": f"exit {done.returncode}",
            "ranks": ranks_in(marks)}


def run_fit(script: Path, marks: Path) -> dict:
    from sagelaunch.estimators import PyTorch

    # any supported version: a local job runs with the installed torch (and says so in one line on stderr)
    estimator = PyTorch(entry_point=str(script), instance_type="local", framework_version="2.8.0",
                        hyperparameters={"marks": str(marks)},
                        distribution={"mpi": {"enabled": True, "processes_per_host": 2}})
    start = time.perf_counter()
    estimator.fit(logs=False)
    seconds = time.perf_counter() - start
    job = estimator.latest_training_job
    return {"kind": "fit", "seconds": seconds, "job": job.name, "status": job.describe()["TrainingJobStatus"],
            "ranks": ranks_in(marks)}


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--home", type=Path, help="SAGELAUNCH_HOME for the fit() jobs (default: a temporary one)")
    args = parser.parse_args(argv)
    saved_home = os.environ.get("SAGELAUNCH_HOME")
    runs: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        # the benchmark's jobs stay out of yours
        os.environ["SAGELAUNCH_HOME"] = str(args.home or Path(tmp, "home"))
        try:
            script = Path(tmp, "exit_now.py")
            script.write_text(SCRIPT)

            def marks(label: str) -> Path:
                folder = Path(tmp, label)
                folder.mkdir()
                return folder

            run_fit(script, marks("warm-up"))  # first imports, registry creation
            for i in range(args.repeats):  # interleaved, so both see the same machine load
                runs.append(run_torchrun(script, marks(f"torchrun-{i}")))
                runs.append(run_fit(script, marks(f"fit-{i}")))
        finally:
            if saved_home is None:
                os.environ.pop("SAGELAUNCH_HOME", None)
            else:
                os.environ["SAGELAUNCH_HOME"] = saved_home
    for run in runs:
        print(f"  {run['kind']:<8} {run['job'] or '-':<48} {run['status']:<10} ranks {run['ranks']}  "
              f"{run['seconds']:.2f} s")
    fit = statistics.median(r["seconds"] for r in runs if r["kind"] == "fit")
    torchrun = statistics.median(r["seconds"] for r in runs if r["kind"] == "torchrun")
    print(f"torchrun --nproc_per_node 2 : median {torchrun:.3f} s")
    print(f"estimator.fit() local, 2 proc: median {fit:.3f} s")
    print(f"overhead ratio fit/torchrun  : {fit / torchrun:.3f}  (target <= 1.15)")
    return {"fit": fit, "torchrun": torchrun, "ratio": fit / torchrun, "runs": runs}


if __name__ == "__main__":
    main()
