"""`InstanceType`: one record per instance-type name, built once from the catalog, that every layer asks instead
of testing the name's text.

Which backend runs it ("local"/"local_gpu" here, any other name on SageMaker), its processor, its accelerators
(count, memory, peak FLOP/s by precision, bandwidths, each with its source as support_matrix.json gives it).
"local_gpu" promises at least LOCAL_GPU_MINIMUM GPUs; how many this machine really shows is
`sagelaunch.launcher.common.environment`'s probe (jobspec reads no environment).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.accelerators import AcceleratorFacts, accelerated_instance_types, accelerator_facts
from sagelaunch.jobspec.catalog import LOCAL_INSTANCE_TYPES, instance_info, processor_for
from sagelaunch.jobspec.suggest import choice_error

Backend = Literal["local", "sagemaker"]
Kind = Literal["cpu", "gpu", "trainium", "graviton"]
Processor = Literal["cpu", "gpu", "neuron"]


class InstanceType(BaseModel):
    """The facts of one training instance type, as the catalog holds them (`source`: the catalog's source key of
    the count and memory figures; `accelerators`: FLOP/s and bandwidths, each with its page and date)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    backend: Backend  # the backend module that runs it
    kind: Kind  # the catalog's kind
    processor: Processor  # the image's processor tag
    gpus: int  # per host: the catalog's count; "local_gpu": at least LOCAL_GPU_MINIMUM, the machine decides
    gpus_from_machine: bool  # "local_gpu": the job gets the GPUs this machine shows
    vcpus: int | None
    source: str | None  # None for the local types (no catalog entry)
    accelerators: AcceleratorFacts | None  # GPU and Trainium types; None for CPU and the local types

    @property
    def is_local(self) -> bool:
        return self.backend == "local"

    @property
    def has_gpus(self) -> bool:
        return self.processor == "gpu"

    @property
    def accelerator_count(self) -> int:
        return self.accelerators.count if self.accelerators else 0


def is_local(name: str | None) -> bool:
    """Whether a name (any name: serving types too, unknown ones included) runs on this machine."""
    return name in LOCAL_INSTANCE_TYPES


def names_sagemaker_type(name: str) -> bool:
    """Whether a name has the form of a SageMaker type (ml.*): a misspelt one is still meant for SageMaker."""
    return name.startswith("ml.")


def backend_of(name: str | None) -> Backend:
    return "local" if is_local(name) else "sagemaker"


@lru_cache(maxsize=None)
def instance_type(name: str) -> InstanceType:
    """The record of a training instance type (or "local"/"local_gpu"); an unknown name raises the catalog's
    SagelaunchError (field instance_type, the allowed names, a "did you mean")."""
    info = instance_info(name)
    local = is_local(name)
    return InstanceType.model_validate(dict(
        name=name, backend=backend_of(name), kind=info["kind"], processor=processor_for(name),
        gpus=int(info.get("gpus", 0)), gpus_from_machine=local and info["kind"] == "gpu", vcpus=info.get("vcpus"),
        source=None if local else info["source"],
        accelerators=None if local or info["kind"] not in ("gpu", "trainium") else accelerator_facts(name)))


def accelerated(name: str) -> AcceleratorFacts:
    """The accelerator facts of a GPU or Trainium type; a CPU, local or unknown type is refused with the
    accelerated types as the allowed values."""
    facts = instance_type(name).accelerators if name in accelerated_instance_types() else None
    if facts is None:
        raise choice_error("instance_type", name, accelerated_instance_types())
    return facts
