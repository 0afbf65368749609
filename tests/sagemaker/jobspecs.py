"""Specs and source folders for the SageMaker backend tests (built directly, no estimator needed)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from sagelaunch.jobspec.distribution import DistributionSpec, ModelParallelSettings, MPISettings
from sagelaunch.jobspec.names import job_name
from sagelaunch.jobspec.spec import InputChannel, ProfilerSettings, TrainingJobSpec, spec_from_fields

IMAGE = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0-gpu-py310-cu118-ubuntu20.04-sagemaker"
ROLE = "arn:aws:iam::123456789012:role/SageMakerRole"
SHIPPED = ["lib/__init__.py", "lib/model.py", "requirements.txt", "train.py"]
SMP = {"partitions": 2, "microbatches": 4, "pipeline": "interleaved", "ddp": True}


def make_source(root: Path) -> Path:
    """A source_dir holding files that ship and files that must not (credentials, .git, caches, *.bin, a link out)."""
    files = {
        "train.py": "print('training')\n",
        "requirements.txt": "transformers\n",
        "lib/__init__.py": "",
        "lib/model.py": "MODEL = 1\n",
        ".env": "AWS_SECRET_ACCESS_KEY=do-not-ship\n",
        ".git/config": "[core]\n",
        "__pycache__/train.cpython-311.pyc": "x",
        "lib/model.pyc": "x",
        ".ipynb_checkpoints/train-checkpoint.py": "x",
        "weights.bin": "big",  # excluded by the spec's ignore_patterns
        ".aws/credentials": "[default]\naws_secret_access_key=do-not-ship\n",
        ".ssh/id_rsa": "-----BEGIN OPENSSH PRIVATE KEY-----\n",
        ".netrc": "machine example.com password do-not-ship\n",
        ".env.local": "TOKEN=do-not-ship\n",
        ".envrc": "export TOKEN=do-not-ship\n",
        "secrets/token.txt": "do-not-ship\n",
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    outside = root.parent / f"{root.name}-outside.txt"
    outside.write_text("do-not-ship\n")
    link = root / "lib" / "outside.txt"  # points outside source_dir: skipped, never read
    if not link.is_symlink():
        link.symlink_to(outside)
    return root


def make_spec(base: str, source: Path, **overrides) -> TrainingJobSpec:
    fields = dict(
        job_name=job_name(base), framework="pytorch", framework_version="2.0.0", py_version="py310",
        image_uri=IMAGE, region="us-west-2", role=ROLE, entry_point="train.py", source_dir=str(source),
        ignore_patterns=("*.bin",), instance_type="ml.p4d.24xlarge", instance_count=2, gpus_per_host=8,
        processes_per_host=8, hyperparameters={"epochs": 3, "lr": 5e-5, "model": "roberta-base"},
        distribution=DistributionSpec(strategy="modelparallel", given=True, mpi=MPISettings(enabled=True),
                                      smdistributed=True, modelparallel=ModelParallelSettings(parameters=SMP)),
        profiler=ProfilerSettings(system_monitor_interval_millis=500),
    )
    fields.update(overrides)
    return spec_from_fields(**fields)


def channel(name: str, uri: str) -> InputChannel:
    return InputChannel(name=name, uri=uri)


def archive_names(data: bytes) -> list[str]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        return sorted(m.name for m in archive.getmembers() if m.isfile())
