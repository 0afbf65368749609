"""Typed lookups of the hardware and price facts a planner needs, over support_matrix.json.

Per accelerator: peak dense FLOP/s by precision, memory bandwidth, intra-node link; per instance: how many
accelerators, their memory (instance_types' one definition) and network bandwidth; SageMaker training prices per
region. Every figure carries the page it comes from and the date it was read. A figure no stored page gave is None
(or absent from `peak_flops`, or no price at all): callers say "unknown", never guess.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from sagelaunch.jobspec.catalog import check_region, instance_info, matrix
from sagelaunch.jobspec.suggest import choice_error

Precision = Literal["fp32", "tf32", "fp16", "bf16", "fp8"]
PRECISIONS: tuple[Precision, ...] = ("fp32", "tf32", "fp16", "bf16", "fp8")

GIB = 2**30
_BYTES_PER_S = {"GB/s": 1e9, "GiB/s": float(GIB)}  # how the matrix's memory_unit reads


class FactSource(BaseModel):
    """Where one figure comes from: the page read, the primary page it quotes (if any), the date read."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    page: str
    url: str
    cites: str | None = None
    read_on: date


class AcceleratorFacts(BaseModel):
    """One instance type's accelerators. Bandwidths are bytes/s; None where no stored page gave the figure."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    instance_type: str
    accelerator: str  # the accelerator_models entry, e.g. "A100-SXM4-40GB"
    count: int  # accelerators per instance
    memory_bytes: int  # per accelerator
    memory_source: str  # the matrix's source key of instance_types' memory figure
    peak_flops: dict[Precision, float]  # dense, per accelerator; a precision absent = not available or unknown
    hbm_bandwidth: float | None  # per accelerator
    intra_node_bandwidth: float | None  # NVLink per accelerator, both directions together
    inter_node_bandwidth: float | None  # network (EFA) per instance
    sources: dict[str, FactSource]  # field name → its page, for every figure that is not None/empty


class TrainingPrice(BaseModel):
    """On-demand SageMaker training price of one instance, per hour, in one region."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    instance_type: str
    region: str
    usd_per_hour: float
    source: str
    read_on: date


def accelerated_instance_types() -> tuple[str, ...]:
    return tuple(k for k in matrix()["instance_accelerators"] if not k.startswith("_"))


def _source(key: str) -> FactSource:
    page = matrix()["accelerator_fact_pages"][key]
    return FactSource(page=key, url=page["url"], cites=page.get("cites"), read_on=date.fromisoformat(page["read_on"]))


def accelerator_facts(instance_type: str) -> AcceleratorFacts:
    """The accelerator facts of a GPU or Trainium training instance type; a CPU or unknown type is refused with the
    accelerated types as the allowed values (and a "did you mean" when one is close)."""
    entry = matrix()["instance_accelerators"].get(instance_type)
    if entry is None or instance_type.startswith("_"):
        raise choice_error("instance_type", instance_type, accelerated_instance_types())
    info = instance_info(instance_type)
    model: dict[str, Any] = matrix()["accelerator_models"][entry["model"]]
    memory_gib: float = info.get("gpu_memory_gib") or info["accelerator_memory_gib"]
    per_s = _BYTES_PER_S[model.get("memory_unit", "GB/s")]
    mem_bw = model["memory_gb_per_s"] * per_s if model["memory_gb_per_s"] is not None else None
    link = model["intra_node_gb_per_s"] * 1e9 if model["intra_node_gb_per_s"] is not None else None
    net = entry["inter_node_gbps"] * 1e9 / 8 if entry["inter_node_gbps"] is not None else None
    figures = {"peak_flops": model["peak_tflops"] or None, "hbm_bandwidth": mem_bw, "intra_node_bandwidth": link}
    page_of = {"peak_flops": "peak_tflops", "hbm_bandwidth": "memory_gb_per_s", "intra_node_bandwidth": "intra_node_gb_per_s"}
    sources = {name: _source(model["sources"][page_of[name]]) for name, value in figures.items() if value is not None}
    if net is not None:
        sources["inter_node_bandwidth"] = _source(entry["source"])
    return AcceleratorFacts(
        instance_type=instance_type, accelerator=entry["model"],
        count=int(info.get("gpus") or info.get("accelerators") or 0), memory_bytes=int(memory_gib * GIB),
        memory_source=info["source"], peak_flops={p: t * 1e12 for p, t in model["peak_tflops"].items()},
        hbm_bandwidth=mem_bw, intra_node_bandwidth=link, inter_node_bandwidth=net, sources=sources)


def training_price(instance_type: str, region: str) -> TrainingPrice | None:
    """The on-demand training price per hour, or None where no stored page gave one (say "price unknown")."""
    instance_info(instance_type)  # an unknown type is refused, with its "did you mean"
    check_region(region)
    table = matrix()["training_prices"]
    price = table["prices"].get(region, {}).get(instance_type)
    if price is None:
        return None
    return TrainingPrice(instance_type=instance_type, region=region, usd_per_hour=price["usd_per_hour"],
                         source=price["source"], read_on=date.fromisoformat(price["read_on"]))
