"""What the local backend runs: the compiled CreateTrainingJob request plus the few local facts it does not carry.

SageMaker's container lays out /opt/ml and derives the SM_* variables from what CreateTrainingJob received; the
local backend does the same from the same request (launcher.common.request), so both backends consume one compiled form.
What a host on this machine needs beyond it (the job folder, where the code files are, processes per host…) is
in `LocalFacts`, decided once at submit time instead of re-read from the spec everywhere.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.spec import TrainingJobSpec, replace
from sagelaunch.launcher.local.host_layout import HostLayout
from sagelaunch.launcher.local.artifacts import artifact_prefix
from sagelaunch.launcher.common.request import CreateTrainingJobRequest, compile_create_training_job_request
from sagelaunch.launcher.common.request_model import Channel, ProfilerConfig, ResourceConfig, TrainingJobRequest


class LocalFacts(BaseModel):
    """Facts about a local job that its request does not hold."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    job_dir: Path
    artifact_prefix: str  # <output_path>/<job> (a folder or s3://), or <job folder>/artifacts
    region: str
    framework: Literal["pytorch", "tensorflow"]
    framework_version: str | None = None  # the image's; SMP jobs name partial checkpoints as its SMP release does
    processes_per_host: int  # torchrun --nproc-per-node
    distributed: bool  # a distribution= was given (the toolkit's distribution_hosts)
    submit_directory: str | None  # the spec's; None: each host's hyperparameters name its own code folder
    code_files: tuple[tuple[Path, str], ...]  # (local file, name in the code folder); empty for an s3:// source_dir
    code_archive: str | None  # an s3:// source_dir: the sourcedir.tar.gz each host unpacks
    checkpoint_local_path: str | None  # the folder every run that names it shares (SageMaker has no such thing)


@dataclass(frozen=True)
class LocalJob:
    """One local job: `request` is exactly what a SageMaker job of the same spec would be sent (its code and
    output locations made local), `typed_request` the same request typed (read by attribute), `facts` the rest."""

    request: CreateTrainingJobRequest
    facts: LocalFacts
    typed_request: TrainingJobRequest

    @property
    def name(self) -> str:
        return self.typed_request.training_job_name

    @property
    def resources(self) -> ResourceConfig:
        assert self.typed_request.resource_config is not None, "the compiler always sends ResourceConfig"
        return self.typed_request.resource_config

    @property
    def instance_type(self) -> str:
        assert self.resources.instance_type is not None, "a local job has one instance type (no instance groups)"
        return self.resources.instance_type

    @property
    def instance_count(self) -> int:
        assert self.resources.instance_count is not None, "a local job has one instance count (no instance groups)"
        return self.resources.instance_count

    @property
    def max_run(self) -> int:
        condition = self.typed_request.stopping_condition
        assert condition is not None and condition.max_runtime_in_seconds is not None, "the compiler sends it"
        return condition.max_runtime_in_seconds

    @property
    def input_mode(self) -> str:
        """The job's TrainingInputMode (a channel's own InputMode overrides it)."""
        assert self.typed_request.algorithm_specification is not None, "the compiler always sends it"
        return self.typed_request.algorithm_specification.training_input_mode

    @property
    def environment(self) -> dict[str, str]:
        return dict(self.typed_request.environment or {})

    @property
    def channels(self) -> tuple[Channel, ...]:
        return self.typed_request.input_data_config or ()

    @property
    def checkpoint_s3_uri(self) -> str | None:
        return self.typed_request.checkpoint_config.s3_uri if self.typed_request.checkpoint_config else None

    @property
    def profiler_config(self) -> ProfilerConfig | None:
        return self.typed_request.profiler_config

    @property
    def profiler_runs(self) -> bool:
        config = self.profiler_config
        return config is not None and not config.disable_profiler

    @property
    def hyperparameters(self) -> dict[str, str]:
        """HyperParameters as sent: JSON-encoded values."""
        return dict(self.typed_request.hyper_parameters or {})

    def hyperparameter(self, key: str, default: Any = None) -> Any:
        """One decoded hyperparameter of the request (they are sent JSON-encoded)."""
        encoded = self.hyperparameters.get(key)
        return default if encoded is None else json.loads(encoded)

    @property
    def entry_point(self) -> str:
        return self.hyperparameter("sagemaker_program")

    @property
    def mp_parameters(self) -> dict[str, Any] | None:
        return self.hyperparameter("mp_parameters")

    def host_hyperparameters(self, layout: HostLayout) -> dict[str, str]:
        """hyperparameters.json of one host: the request's, with the code where this host has it (SageMaker's
        container downloads sagemaker_submit_directory into /opt/ml/code; each local host has its own copy)."""
        hyperparameters = self.hyperparameters
        if self.facts.submit_directory is None:
            hyperparameters["sagemaker_submit_directory"] = json.dumps(str(layout.code_dir))
        return hyperparameters


def compile_local_job(spec: TrainingJobSpec, job_dir: Path, code_files: list[tuple[Path, str]]) -> LocalJob:
    """The request of `spec` as the local backend sends it to itself: the code in the first host's code folder,
    the output under the job's artifact prefix when the spec names no output_path."""
    prefix = artifact_prefix(spec.output.output_path, spec.job_name, job_dir)
    code_archive = spec.code.source_dir if (spec.code.source_dir or "").startswith("s3://") else None
    located = replace(spec, output_path=spec.output.output_path or prefix,
                      submit_directory=spec.code.submit_directory or str(HostLayout(job_dir / "algo-1").code_dir))
    assert spec.framework != "generic", "a generic image's job is refused before it reaches the local backend"
    facts = LocalFacts(job_dir=job_dir, artifact_prefix=prefix, region=spec.region, framework=spec.framework,
                       framework_version=spec.framework_version,
                       processes_per_host=spec.compute.processes_per_host, distributed=spec.code.distribution.given,
                       submit_directory=spec.code.submit_directory, code_files=tuple(code_files),
                       code_archive=code_archive, checkpoint_local_path=spec.output.checkpoint_local_path)
    wire = compile_create_training_job_request(located)
    return LocalJob(wire, facts, TrainingJobRequest.of(wire))
