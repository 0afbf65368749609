"""The estimators' memory check of an SMP job whose model sagelaunch knows (the sagelaunch-only `planned_model`
argument: a Hugging Face config.json): a layout whose lower bound — the model states of its most loaded GPU, as
SageMaker's SMP v1 holds them, activations left out — exceeds the GPU's memory is refused, naming the smallest
single change that fits; above 85 % it warns. A job on an instance type without accelerator facts (local, CPU) is
never refused for memory, nor is one whose model is not given."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from sagelaunch.jobspec.accelerators import accelerated_instance_types
from sagelaunch.jobspec.errors import SagelaunchError
from sagelaunch.jobspec.smp import SMPParameters
from sagelaunch.planner.hardware import hardware
from sagelaunch.planner.layout import Layout
from sagelaunch.planner.models import model_from_config
from sagelaunch.planner.plan import TERM_NAMES, TIGHT, lower_bound, smallest_changes

GIB = 2**30


class MemoryWarning(UserWarning):
    """A layout whose model states alone take more than 85 % of a GPU."""


def check_smp_memory(model: str | Path | dict[str, Any], smp: SMPParameters, instance_type: str,
                     instance_count: int) -> None:
    """Raise SagelaunchError (field `distribution`) when the layout cannot fit; warn when it is tight."""
    if instance_type not in accelerated_instance_types():
        return
    try:
        shape = model_from_config(model)
    except SagelaunchError as err:  # the estimator's argument is planned_model
        raise SagelaunchError(f"planned_model: {err}", **{**err.parts(), "field": "planned_model"}) from None
    hw = hardware(instance_type)
    layout = Layout.from_smp(smp)
    bound = lower_bound(shape, layout, hw, instance_count)
    terms = bound.terms()
    largest = max(terms, key=lambda k: terms[k])
    where = (f"{shape.parameters / 1e9:.1f}B-parameter {shape.family} model with tensor_parallel_degree={layout.tp}, "
             f"pipeline_parallel_degree={layout.pp}, shard_optimizer_state={layout.shard_optimizer_state}, "
             f"sharded_data_parallel_degree={layout.sdp} on {instance_count} × {instance_type}")
    held = (f"{bound.total / GIB:.1f} GiB of model states per GPU before any activation "
            f"({TERM_NAMES[largest]} {terms[largest] / GIB:.1f} GiB) against {bound.capacity / GIB:.0f} GiB")
    if bound.total > bound.capacity:
        changes = smallest_changes(shape, layout, hw, instance_count)
        fix = ", or ".join(changes) if changes else "use more instances, or an instance type with more GPU memory"
        raise SagelaunchError(f"distribution: the {where} cannot fit: {held}; {fix}", field="distribution",
                              value=f"smdistributed.modelparallel {smp.model_dump(exclude_defaults=True)}",
                              allowed=f"a layout whose model states fit in {bound.capacity / GIB:.0f} GiB per GPU",
                              fix=fix)
    if bound.total > TIGHT * bound.capacity:
        warnings.warn(f"distribution: the {where} is tight: {held} ({bound.share:.0%}); activations, communication "
                      "buffers and the allocator need the rest (sagelaunch plan shows the whole split)",
                      MemoryWarning, stacklevel=2)
