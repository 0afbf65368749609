"""How SMP v1 scripts create the model: smp.model_creation, smp.delay_param_initialization, smp.set_partition."""

from __future__ import annotations

import contextlib
from typing import Any

from sagelaunch.modelparallel.core import state
from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.pipeline.partitioning import MARK
from sagelaunch.modelparallel.tensor.delayed_init import delay_param_initialization as delayed
from sagelaunch.modelparallel.tensor.tensor_parallel import tensor_parallelism as mark_tensor_parallel


@contextlib.contextmanager
def model_creation(tensor_parallelism: bool = False, dtype=None, **tensor_parallel_config: Any):
    """Modules created inside get `dtype` (floating parameters and buffers) and, with tensor_parallelism=True,
    are marked for tensor parallelism as under smp.tensor_parallelism(**tensor_parallel_config). The config keys
    (attention_in_fp32, fused_softmax, ...) configure SMP's distributed transformer layers; like SMP, they only
    matter for modules that tensor parallelism distributes. As SMP's, it also combines
    smp.delay_param_initialization(): with mp_parameters delayed_parameter_initialization=True the model is
    created without memory and smp.DistributedModel materialises each rank's part."""
    import torch

    if dtype is not None and not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise SMPValidationError(f"smp.model_creation(dtype={dtype!r}): a floating torch.dtype is required, "
                                 "e.g. torch.float32, torch.float16 or torch.bfloat16")
    previous = torch.get_default_dtype()
    with contextlib.ExitStack() as stack:
        if tensor_parallelism:
            stack.enter_context(mark_tensor_parallel(True, **tensor_parallel_config))
        if dtype is not None:
            torch.set_default_dtype(dtype)
            stack.callback(torch.set_default_dtype, previous)
        if state.initialized and state.cfg.delayed_parameter_initialization:
            stack.enter_context(delay_param_initialization(True))
        yield


def delay_param_initialization(enabled: bool = True):
    """SMP's context manager that creates parameters without memory, materialised later per rank (the
    materialisation: modelparallel.delayed_init)."""
    if not enabled:
        return contextlib.nullcontext()

    return delayed(enabled)


def set_partition(module, partition: int) -> None:
    """Assign `module` (and its submodules not assigned otherwise) to pipeline partition `partition`; honoured when
    auto_partition is False, as smp.partition(index) is for modules created inside it."""
    pp = state.cfg.pipeline_parallel_degree if state.initialized else None
    if not isinstance(partition, int) or partition < 0 or (pp is not None and partition >= pp):
        allowed = f"0..{pp - 1} (pipeline_parallel_degree={pp})" if pp else "an int ≥ 0"
        raise SMPValidationError(f"smp.set_partition(module, {partition!r}): partition must be {allowed}")
    for m in module.modules():
        setattr(m, MARK, partition)
