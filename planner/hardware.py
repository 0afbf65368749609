"""The accelerator facts the planner computes with, from the catalog's InstanceType record (jobspec.instance_types:
every figure with its page and date); the speed model's efficiency constant per accelerator, fitted on one published run
(efficiency.json, written by scripts/fit_planner_efficiency.py)."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.instance_types import accelerated


class Hardware(BaseModel):
    model_config = ConfigDict(frozen=True)

    instance_type: str
    accelerator: str
    gpus_per_instance: int
    memory_bytes: int  # per accelerator
    peak_flops: dict[str, float]  # dense FLOP/s per accelerator, by precision
    intra_node_bandwidth: float | None  # bytes/s per accelerator
    inter_node_bandwidth: float | None  # bytes/s per instance


def hardware(instance_type: str) -> Hardware:
    """An unknown or CPU instance type raises the catalog's SagelaunchError (field instance_type, did-you-mean)."""
    facts = accelerated(instance_type)
    return Hardware(instance_type=instance_type, accelerator=facts.accelerator, gpus_per_instance=facts.count,
                    memory_bytes=facts.memory_bytes, peak_flops={str(k): v for k, v in facts.peak_flops.items()},
                    intra_node_bandwidth=facts.intra_node_bandwidth, inter_node_bandwidth=facts.inter_node_bandwidth)


class Efficiency(BaseModel):
    model_config = ConfigDict(frozen=True)

    accelerator: str
    value: float  # achieved / peak of the dense matmul work, communication and bubble modelled separately
    fitted_on: str  # the published run


@lru_cache(maxsize=1)
def _efficiencies() -> dict[str, Efficiency]:
    data = json.loads((Path(__file__).parent / "efficiency.json").read_text())
    return {k: Efficiency(accelerator=k, **v) for k, v in data["accelerators"].items()}


def efficiency(accelerator: str) -> Efficiency | None:
    """The fitted constant of this accelerator, else of its family's (A100-SXM4-40GB → A100); None if no published
    run of that chip was fitted."""
    table = _efficiencies()
    return table.get(accelerator) or table.get(accelerator.split("-")[0])
