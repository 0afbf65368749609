"""A layout: the SMP v1 degrees and switches that decide what each GPU holds. Its rules are SMP's, checked by
sagelaunch.jobspec.smp (SMPParameters and check_world), never a second copy; the planner adds only what SMP's
parameters do not say: whether the layers are activation-checkpointed (smp.set_activation_checkpointing in the
script) and the step's global batch."""

from __future__ import annotations

from typing import Any, Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.smp import SMPParameters, check_world

Precision = Literal["fp32", "fp16", "bf16"]


class Layout(BaseModel):
    model_config = ConfigDict(frozen=True)

    tp: Annotated[int, Field(ge=1, description="tensor_parallel_degree")] = 1
    pp: Annotated[int, Field(ge=1, description="pipeline_parallel_degree")] = 1
    shard_optimizer_state: bool = False
    sdp: Annotated[int, Field(ge=1, description="sharded_data_parallel_degree")] = 1
    activation_checkpointing: bool = Field(False, description="each layer of the stack (smp.set_activation_"
                                                              "checkpointing on its children)")
    offload_activations: bool = False
    activation_loading_horizon: Annotated[int, Field(ge=1)] = 4
    microbatches: Annotated[int, Field(ge=1)] = 1
    precision: Precision = "bf16"
    pipeline: Literal["interleaved", "simple"] = "interleaved"
    active_microbatches: Annotated[int | None, Field(ge=1)] = None

    def smp_parameters(self, world_size: int) -> SMPParameters:
        """The SMP v1 parameters of this layout (ddp where there is data parallelism or tp), validated by
        jobspec.smp's own rules."""
        params: dict[str, Any] = {"tensor_parallel_degree": self.tp, "pipeline_parallel_degree": self.pp,
                  "shard_optimizer_state": self.shard_optimizer_state,
                  "sharded_data_parallel_degree": self.sdp, "offload_activations": self.offload_activations,
                  "activation_loading_horizon": self.activation_loading_horizon,
                  "microbatches": self.microbatches, "pipeline": self.pipeline,
                  "ddp": world_size > self.tp * self.pp or self.tp > 1 or self.sdp > 1,
                  "fp16": self.precision == "fp16", "bf16": self.precision == "bf16"}
        if self.active_microbatches is not None:
            params["active_microbatches"] = self.active_microbatches
        return SMPParameters.model_validate(params)

    @classmethod
    def from_smp(cls, params: SMPParameters, activation_checkpointing: bool = False) -> "Layout":
        precision: Precision = "fp16" if params.fp16 else "bf16" if params.bf16 else "fp32"
        return cls(tp=params.tensor_parallel_degree, pp=params.pipeline_parallel_degree,
                   shard_optimizer_state=params.shard_optimizer_state, sdp=params.sharded_data_parallel_degree,
                   activation_checkpointing=activation_checkpointing, offload_activations=params.offload_activations,
                   activation_loading_horizon=params.activation_loading_horizon, microbatches=params.microbatches,
                   precision=precision, pipeline="simple" if params.pipeline == "simple" else "interleaved",
                   active_microbatches=params.active_microbatches)

    @property
    def half(self) -> bool:
        return self.precision != "fp32"

    def label(self) -> str:
        parts = [f"tp{self.tp}", f"pp{self.pp}"]
        if self.sdp > 1:
            parts.append(f"sdp{self.sdp}")
        if self.shard_optimizer_state:
            parts.append("zero1")
        if self.activation_checkpointing:
            parts.append("ckpt")
        if self.offload_activations:
            parts.append("offload")
        parts.append(f"mb{self.microbatches}")
        return " ".join(parts)


class World(BaseModel):
    """How many processes, and the degrees they leave for data parallelism."""

    model_config = ConfigDict(frozen=True)

    size: int
    gpus_per_host: int
    dp: int  # SMP's data-parallel degree: world / pp (tp ranks included)
    rdp: int  # reduced data parallel: world / (pp · tp), the model replicas


def check_layout(layout: Layout, world_size: int, gpus_per_host: int) -> World:
    """SMP's rules for this layout on this world (jobspec.smp), as the estimators apply them."""
    params = layout.smp_parameters(world_size)
    grid = check_world(params, world_size, gpus_per_host or None)
    return World(size=world_size, gpus_per_host=gpus_per_host, dp=grid.data_parallel_degree,
                 rdp=grid.reduced_data_parallel_degree)


def check_batch(global_batch: int, layout: Layout, world: World) -> int:
    """Samples per microbatch per model replica; the global batch must divide evenly."""
    replicas = world.size if layout.sdp > 1 else world.rdp
    per_step = replicas * layout.microbatches
    if global_batch < 1 or global_batch % per_step:
        raise SagelaunchError(
            f"global_batch={global_batch} does not divide into {replicas} model replicas × {layout.microbatches} "
            f"microbatches", field="global_batch", value=global_batch, allowed=f"a multiple of {per_step}",
            fix=f"use a global batch that is a multiple of {per_step}, or change microbatches")
    return global_batch // per_step
