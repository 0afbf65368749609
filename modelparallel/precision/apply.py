"""parallelize's precision step: with fp16/bf16 SMP casts the whole model to the half dtype (its Bit16_Module);
with sharded data parallelism the model stays fp32 (its sharded parameters are the master weights) and FSDP2
computes in the half dtype (data/sharded.py). The optimizer's fp32 masters are precision/amp_optimizer.py's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    import torch
    import torch.nn as nn

    from sagelaunch.jobspec.smp import SMPParameters


@dataclass(frozen=True)
class PrecisionOptions:
    half: Literal["fp16", "bf16"] | None  # None: fp32 training
    fp32_parameters: bool  # sharded data parallelism: the sharded fp32 parameters are the masters

    @classmethod
    def from_config(cls, cfg: SMPParameters) -> PrecisionOptions:
        return cls("fp16" if cfg.fp16 else "bf16" if cfg.bf16 else None, cfg.sharded_data_parallel_degree > 1)

    def half_dtype(self) -> torch.dtype | None:
        """The dtype the model computes in under fp16/bf16; None for fp32 training."""
        import torch

        return {"fp16": torch.float16, "bf16": torch.bfloat16, None: None}[self.half]


def apply_precision(module: nn.Module, options: PrecisionOptions) -> torch.dtype | None:
    """Cast the model's parameters (first, before any sharding: a model built on the meta device is then
    initialised in that dtype, as SMP's is); return the dtype the model computes in."""
    import torch

    half = options.half_dtype()
    if half is not None:
        module.to(dtype=torch.float32 if options.fp32_parameters else half)
    return half
