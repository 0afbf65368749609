"""smp.DistributedModel's tracing and all-reduce arguments of SMP v1, checked before the model is touched.

SMP v1's API reference (sagemaker-python-sdk doc/api/training/smp_versions/latest/smd_model_parallel_pytorch.rst,
"DistributedModel", Parameters) says what each does:
- trace_device ("cpu"|"gpu"): where SMP traces the model for its auto-partition (module order, output shapes and,
  on the GPU, execution times). Here no value changes the result: the auto-partition balances parameter counts
  (pipeline/tree.py) or layer counts (pipeline/stack.py), measured on neither device, so both are accepted.
- trace_execution_times (bool): the auto-partition uses measured module times; must be False with trace_device="cpu".
- trace_memory_usage (bool): the auto-partition uses measured memory per module instead of output-size estimates.
  Ours measures neither, so True is refused where an auto-partition happens (pp > 1 with auto_partition); with
  pp == 1 or a manual partition nothing is partitioned by them, in SMP either, and True changes nothing.
- overlapping_allreduce (bool): all-reduce as gradients become ready (True) or at the end of the step (False). The
  averaged gradients are the same either way (only when the communication runs differs), so both are accepted.
- backward_passes_per_step (int ≥ 1): all-reduce data-parallel gradients on every N-th backward pass only (the
  passes in between accumulate locally): honoured (data/accumulation.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sagelaunch.modelparallel.errors import SMPValidationError

if TYPE_CHECKING:
    from sagelaunch.jobspec.smp import SMPParameters

TRACE_DEVICES = ("cpu", "gpu")


@dataclass(frozen=True)
class TracingArguments:
    """SMP v1's DistributedModel arguments about tracing and the all-reduce, validated (see the module's doc)."""

    trace_device: str = "gpu"
    trace_execution_times: bool = False
    overlapping_allreduce: bool = True
    backward_passes_per_step: int = 1
    trace_memory_usage: bool = False

    @classmethod
    def checked(cls, cfg: SMPParameters, **values: Any) -> TracingArguments:
        """The arguments, or SMPValidationError naming the first one that is not allowed or not honoured."""
        args = cls(**values)
        device = args.trace_device
        if not isinstance(device, str) or device not in TRACE_DEVICES:
            _refuse("trace_device", device, "'cpu' or 'gpu'", "pass trace_device='gpu' (SMP's default) or 'cpu'")
        for name in ("trace_execution_times", "overlapping_allreduce", "trace_memory_usage"):
            value = getattr(args, name)
            if not isinstance(value, bool):
                _refuse(name, value, "True or False", f"pass {name}=True or False")
        passes = args.backward_passes_per_step
        if isinstance(passes, bool) or not isinstance(passes, int) or passes < 1:
            _refuse("backward_passes_per_step", passes, "an int ≥ 1",
                    "pass the number of @smp.step calls per optimizer.step() (1: all-reduce on every step)")
        if args.trace_execution_times and device == "cpu":
            _refuse("trace_execution_times", True, "False with trace_device='cpu' (SMP v1)",
                    "pass trace_execution_times=False, or trace_device='gpu'")
        if cfg.pipeline_parallel_degree > 1 and cfg.auto_partition:
            for name, measures in (("trace_execution_times", "module execution times"),
                                   ("trace_memory_usage", "module memory")):
                if getattr(args, name):
                    _refuse(name, True, "False (sagelaunch's auto-partition balances parameter counts)",
                            f"pass {name}=False (nearest: the partition by parameter counts), or place the layers "
                            "yourself with auto_partition=False and smp.partition / smp.set_partition",
                            f"sagelaunch's auto-partition does not measure {measures}, so SMP's partition from "
                            "them cannot be reproduced")
        return args


def _refuse(name: str, value: Any, allowed: str, fix: str, why: str = "") -> None:
    reason = f" ({why})" if why else ""
    raise SMPValidationError(f"smp.DistributedModel({name}={value!r}) is not supported{reason}: allowed {allowed}; "
                             f"{fix}", field=name, value=value, allowed=allowed, fix=fix)
