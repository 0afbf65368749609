"""Benchmark: importing sagelaunch's estimators vs the SageMaker SDK v3, and one job's construct+compile.

    python scripts/bench_estimators.py [--repeats 7] [--jobs 2000]

1. fresh-process `import sagelaunch.estimators, sagelaunch.profiler_config` (median over --repeats processes), side by side
   with `from sagemaker.train import ModelTrainer; from sagemaker.core import image_uris` run by
   .venv-sagemaker/bin/python when that venv exists (targets: ours ≤ 0.2 s);
2. construct + validate + compile one profiled model-parallel PyTorch job to its CreateTrainingJob
   request (median over --jobs; target ≤ 1 ms). Printed, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
SDK_PYTHON = ROOT / ".venv-sagemaker" / "bin" / "python"
TIMED_IMPORT = (
    "import time; t = time.perf_counter(); c = time.process_time(); {stmt}; "
    "print(time.perf_counter() - t, time.process_time() - c)"
)
OURS = "import sagelaunch.estimators, sagelaunch.profiler_config"
SDK = "from sagemaker.train import ModelTrainer; from sagemaker.core import image_uris"


def fresh_import(python: str, stmt: str, repeats: int) -> tuple[float, float, float]:
    """Medians: import wall seconds inside the process, its CPU seconds (robust on a busy
    machine), and the whole process's wall seconds."""
    inside, cpu, wall = [], [], []
    for _ in range(repeats):
        t = time.perf_counter()
        out = subprocess.run([python, "-c", TIMED_IMPORT.format(stmt=stmt)], capture_output=True, text=True,
                             cwd=ROOT, check=True)
        wall.append(time.perf_counter() - t)
        w, c = out.stdout.strip().splitlines()[-1].split()
        inside.append(float(w))
        cpu.append(float(c))
    return statistics.median(inside), statistics.median(cpu), statistics.median(wall)


def line(label: str, figures: tuple[float, float, float]) -> str:
    w, c, p = (x * 1000 for x in figures)
    return f"{label:<37}: {w:7.1f} ms import ({c:6.1f} ms CPU), {p:7.1f} ms whole process"


def compile_one() -> dict:
    from sagelaunch.estimators import PyTorch
    from sagelaunch.profiler_config import ProfilerConfig

    est = PyTorch(
        entry_point="train.py", role="arn:aws:iam::123456789012:role/SageMakerRole", region="us-west-2",
        framework_version="2.0.0", instance_type="ml.p4d.24xlarge", instance_count=2,
        hyperparameters={"epochs": 3, "lr": 2e-5}, profiler_config=ProfilerConfig(system_monitor_interval_millis=500),
        distribution={"smdistributed": {"modelparallel": {"enabled": True, "parameters": {"partitions": 2, "ddp": True}}},
                      "mpi": {"enabled": True, "processes_per_host": 8}},
    )
    return est.training_job_request("bench-2024-01-01-00-00-00-000", inputs="s3://data-bucket/train")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7, help="fresh processes per import measurement")
    ap.add_argument("--jobs", type=int, default=2000, help="construct+compile repetitions")
    ap.add_argument("--skip-sdk", action="store_true", help="do not time the SageMaker SDK import")
    args = ap.parse_args(argv)

    print(f"fresh-process imports, medians of {args.repeats} processes (target for ours: ≤ 200 ms)")
    ours = fresh_import(sys.executable, OURS, args.repeats)
    print(line("import sagelaunch.estimators, sagelaunch.profiler_config", ours))
    if args.skip_sdk:
        pass
    elif SDK_PYTHON.exists():
        sdk = fresh_import(str(SDK_PYTHON), SDK, max(1, min(args.repeats, 5)))
        print(line("sagemaker ModelTrainer + image_uris", sdk))
        print(f"{'ratio SDK / ours':<37}: {sdk[0] / ours[0]:7.1f}x import wall, {sdk[1] / ours[1]:.1f}x CPU")
    else:
        print("sagemaker SDK not installed in .venv-sagemaker: no side-by-side import figure")

    compile_one()  # first use builds the pydantic validators and loads the matrix
    times = []
    for _ in range(args.jobs):
        t = time.perf_counter()
        compile_one()
        times.append(time.perf_counter() - t)
    med = statistics.median(times)
    print(f"{'construct + validate + compile 1 job':<37}: {med * 1e3:7.3f} ms median of {args.jobs} (target ≤ 1 ms)")


if __name__ == "__main__":
    main()
