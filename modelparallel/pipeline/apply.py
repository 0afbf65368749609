"""parallelize's pipeline step. As in SMP v1 the model is split into this rank's stages at the first @smp.step
call, not when it is wrapped, so that smp.set_partition / smp.set_activation_checkpointing calls made after
wrapping are honoured: parallelize records the options, DistributedModel.partition() runs apply_pipeline."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sagelaunch.modelparallel.data.ddp import broadcast_parameters
from sagelaunch.modelparallel.pipeline.partitioning import StagePlan, plan_stages
from sagelaunch.modelparallel.pipeline.runner import PipelineRunner

if TYPE_CHECKING:
    import torch.nn as nn

    from sagelaunch.jobspec.smp import SMPParameters
    from sagelaunch.modelparallel.core.state import SMPState
    from sagelaunch.modelparallel.data.apply import DataParallelResult


@dataclass(frozen=True)
class PipelineOptions:
    degree: int
    schedule: str  # "simple" (GPipe) or "interleaved" (interleaved 1F1B)
    active_microbatches: int | None
    average_grads_across_microbatches: bool  # smp.DistributedModel's argument

    @classmethod
    def from_config(cls, cfg: SMPParameters, average_grads_across_microbatches: bool) -> PipelineOptions:
        return cls(cfg.pipeline_parallel_degree, cfg.pipeline, cfg.active_microbatches,
                   average_grads_across_microbatches)

    @property
    def pipelined(self) -> bool:
        return self.degree > 1


@dataclass(frozen=True)
class Pipeline:
    stage_plan: StagePlan  # this rank's stage modules, the model pruned to them
    runner: PipelineRunner  # runs one step's microbatches through the schedule


def apply_pipeline(module: nn.Module, options: PipelineOptions, data: DataParallelResult, run: SMPState,
                   sample: tuple[tuple[Any, ...], dict[str, Any]] | None) -> Pipeline:
    """Keep this rank's stages of `module` (pruned in place); replicas then start from their group's first rank's
    weights. `sample` (the model's arguments at the first step) lets a module tree find where it can be split."""
    plan = plan_stages(module, run.cfg, run.layout.pp_rank, sample)
    if hasattr(plan.builder, "share_tied_values"):  # a module tree's parameters tied across stages: one value
        plan.builder.share_tied_values(run.groups["pp"])
    if data.replica_size > 1:
        broadcast_parameters(module, run.groups[data.replica_group_name], only_dtensor=False)
    runner = PipelineRunner(plan.modules, plan.stage_indices, plan.num_stages, run.groups["pp"], run.device,
                            options.schedule, scale_grads=options.average_grads_across_microbatches,
                            active_microbatches=options.active_microbatches)
    return Pipeline(plan, runner)
