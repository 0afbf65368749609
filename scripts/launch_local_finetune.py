"""The README's main job: fine-tune the sentiment RoBERTa through `estimator.fit`, here, profiled.

    python scripts/launch_local_finetune.py                 # tiny offline RoBERTa, shipped data, CPU
    python scripts/launch_local_finetune.py --epochs 1 --max-train-samples 200

A `PyTorch` estimator with a `ProfilerConfig` on instance_type="local": the same arguments as a
SageMaker job, run on this machine under the SageMaker container contract (no Docker, no AWS).
At the end it prints where the model, the logs and the profile are, and the test-set metrics.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tarfile
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent
REPO_ROOT = SCRIPTS.parent
DATA = SCRIPTS / "sentiment_data"


def build_estimator(args: argparse.Namespace):
    """The PyTorch estimator of the main job (nothing runs until fit)."""
    sys.path.insert(0, str(REPO_ROOT))
    from sagelaunch.estimators import PyTorch
    from sagelaunch.profiler_config import Profiler, ProfilerConfig

    hyperparameters = {"model_name_or_path": args.model, "epochs": args.epochs}
    if args.max_train_samples:
        hyperparameters["max_train_samples"] = args.max_train_samples
    return PyTorch(
        entry_point="train_sentiment.py",
        source_dir=str(SCRIPTS),
        instance_type=args.instance_type,
        framework_version="2.0.0",  # AWS's PyTorch 2.0 post; a local job runs on the installed torch
        py_version="py310",
        hyperparameters=hyperparameters,
        # detailed profiling, as on SageMaker (system metrics every 500 ms, the default)
        profiler_config=ProfilerConfig(profile_params=Profiler(cpu_profiling_duration=args.profile_seconds)),
        output_path=str(Path(args.output_path).resolve()),
        base_job_name="roberta-sentiment",
        ignore_patterns=["bench_*.py", "*.ipynb"],
    )


def channels() -> dict[str, str]:
    return {split: (DATA / f"{split}.jsonl").as_uri() for split in ("train", "validation", "test")}


def read_job_metrics(output_data: str | None) -> dict:
    """metrics.json from the job's output.tar.gz (written by train_sentiment.py)."""
    if not output_data:
        return {}
    path = Path(output_data.removeprefix("file://"))
    if not path.is_file():
        return {}
    with tarfile.open(path) as tar:
        for member in tar.getmembers():
            if member.name.endswith("metrics.json"):
                return json.load(tar.extractfile(member))
    return {}


def _shell_path(path: str | Path) -> str:
    """A path a fresh shell in this folder can use: relative when it lies below, else absolute; quoted."""
    path = os.path.abspath(path)  # not resolve(): .venv/bin/python is a link, and the venv is the point
    below = os.path.relpath(path)
    return shlex.quote(below if not below.startswith("..") else path)


def next_commands(model: str | None, profile: str | None) -> list[tuple[str, str]]:
    """(command, what it does) to run next, each through this Python by its path (the venv's .venv/bin/python
    under scripts/main_job.sh), so they work from a fresh shell where the venv is not activated."""
    python = _shell_path(sys.executable)
    sagelaunch = f"{python} -m sagelaunch"
    model, profile = shlex.quote(str(model)), shlex.quote(str(profile))
    return [
        (f"{python} {_shell_path(SCRIPTS / 'test_trained_model.py')} {model}", "classify a few tweets"),
        (f"{sagelaunch} profile analyze {profile}", "findings: what to change"),
        (f"{sagelaunch} profile report {profile} -o report.html", "dashboard + timeline, one offline file"),
        (f"{sagelaunch} profile timeline {profile} -o timeline.html", "the timeline alone"),
        (f"{sagelaunch} profile ui {profile}", "dashboard + timeline in the browser"),
    ]


def main(argv: list[str] | None = None) -> dict:
    sys.path.insert(0, str(REPO_ROOT))
    from sagelaunch.jobspec.catalog import LOCAL_INSTANCE_TYPES

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny-roberta",
                        help="tiny-roberta (offline) or a hub id such as cardiffnlp/twitter-roberta-base-sep2022")
    parser.add_argument("--epochs", type=float, default=8)
    parser.add_argument("--max-train-samples", type=int, default=None)
    parser.add_argument("--instance-type", default="local", choices=LOCAL_INSTANCE_TYPES)
    parser.add_argument("--output-path", default="sagelaunch-output", help="folder for model.tar.gz, output, profile")
    parser.add_argument("--profile-seconds", type=int, default=3600, help="seconds of detailed (Kineto) capture")
    args = parser.parse_args(argv)

    estimator = build_estimator(args)
    job = estimator.fit(channels(), wait=True, logs=True)
    described = job.describe()
    output_data = described.get("OutputDataConfig", {}).get("S3OutputPath")
    artifacts = {
        "job": job.name,
        "status": described["TrainingJobStatus"],
        "model": job.model_data,
        "output": described.get("OutputArtifacts", {}).get("S3OutputArtifacts") or output_data,
        "logs": str(Path(described["JobDir"]) / "logs") if described.get("JobDir") else None,
        "profile": job.profiler_output,
    }
    metrics = read_job_metrics(described.get("OutputArtifacts", {}).get("S3OutputArtifacts"))
    print()
    print(f"training job  {artifacts['job']}  {artifacts['status']}")
    print(f"model         {artifacts['model']}")
    print(f"output        {artifacts['output']}")
    print(f"logs          {artifacts['logs']}")
    print(f"profile       {artifacts['profile']}")
    if metrics:
        print(f"test macro recall {metrics.get('test_recall', float('nan')):.3f}   "
              f"accuracy {metrics.get('test_accuracy', float('nan')):.3f}   "
              f"train time {metrics.get('train_runtime', float('nan')):.1f}s")
    commands = next_commands(artifacts["model"], artifacts["profile"])
    width = max(len(command) for command, _ in commands)
    print("\nnext (or `source .venv/bin/activate` first, then plain `python` and `sagelaunch`):")
    for command, purpose in commands:
        print(f"  {command.ljust(width)}   # {purpose}")
    return {**artifacts, "metrics": metrics}


if __name__ == "__main__":
    main()
