"""@smp.step: run a forward+backward function once per microbatch (pipelined when pp > 1) → StepOutput."""

from __future__ import annotations

import functools
from typing import Any, Callable

from sagelaunch.jobspec.library_marks import PIPELINE_WAIT, span
from sagelaunch.modelparallel.core import _require_init, state
from sagelaunch.modelparallel.core.comm import CommGroup, agree_on_error
from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.pipeline.capture import _ModelCallCaptured
from sagelaunch.modelparallel.pipeline.leader_inputs import leader_arguments
from sagelaunch.modelparallel.pipeline.microbatch import split_arguments
from sagelaunch.modelparallel.pipeline.partitioning import splits_by_module_tree
from sagelaunch.modelparallel.pipeline.step_output import merge_microbatch_results
from sagelaunch.modelparallel.precision.half import to_float_outputs, to_half_inputs
from sagelaunch.modelparallel.tensor import scaled_batch


def step(func: Callable | None = None, *, non_split_inputs=None, input_split_axes=None, detach_outputs: bool = True):
    """Use as @smp.step or @smp.step(non_split_inputs=[...], input_split_axes={...})."""

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def run(*args, **kwargs):
            st = _require_init()
            model = st.model
            if model is None:
                raise SMPValidationError("wrap the model with smp.DistributedModel before calling an @smp.step function")
            n = st.num_microbatches
            if model.pipelined and len(st.layout.groups["pp"]) > 1:  # SMP v1 runs the step on pp_rank 0's inputs
                args, kwargs = leader_arguments(args, kwargs, st.groups["pp"], st.layout.groups["pp"][0],
                                                st.layout.pp_rank)
            error, mbs = None, None
            try:
                mbs = split_arguments(fn, args, kwargs, n, non_split_inputs, input_split_axes)
            except SMPValidationError as err:
                error = str(err)
            agree_on_error(error, CommGroup.WORLD)  # every rank fails together instead of hanging in a collective
            model.begin_step()
            if model.pipelined:
                if not model.partitioned:
                    tree = splits_by_module_tree(model.get_module())
                    model.partition(_first_model_call(fn, model, mbs) if tree else None)
                results = _run_pipelined(fn, model, mbs)
            else:
                results = _run_microbatches(fn, model, mbs)
            model.finish_step()
            model.run_post_step_hooks()
            return merge_microbatch_results(results, detach_outputs)

        return run

    return decorate(func) if func is not None else decorate


def _run_microbatches(fn, model, mbs) -> list[Any]:
    results = []
    try:
        for i, (a, k) in enumerate(mbs):
            state.microbatch = i
            with model.sync_context(last_microbatch=i == len(mbs) - 1):
                results.append(fn(*a, **k))
    finally:
        state.microbatch = None
    return results


def _first_model_call(fn, model, mbs) -> tuple[tuple, dict] | None:
    """The arguments of the step function's model(...) call for the first microbatch (SMP traces the model on them
    before partitioning it); None when the step function does not reach the model."""
    a, k = mbs[0]
    model._capturing = True
    try:
        fn(*a, **k)
    except _ModelCallCaptured as call:
        return tuple(call.args), dict(call.kwargs)
    finally:
        model._capturing = False
    return None


def _capture_model_inputs(fn, model, mbs) -> tuple[list[tuple], list[dict]]:
    """Run the step function up to its model(...) call for each microbatch and record the model's inputs."""
    arg_mbs, kwarg_mbs = [], []
    model._capturing = True
    try:
        for a, k in mbs:
            try:
                fn(*a, **k)
            except _ModelCallCaptured as call:
                margs, mkwargs = model.stage_plan.builder.model_inputs(call.args, call.kwargs)
                arg_mbs.append(tuple(margs))
                kwarg_mbs.append(dict(mkwargs))
            else:
                raise SMPValidationError("an @smp.step function must call the smp.DistributedModel")
    finally:
        model._capturing = False
    return arg_mbs, kwarg_mbs


def _run_pipelined(fn, model, mbs) -> list[Any]:
    import torch
    import torch.distributed as dist

    st = state
    arg_mbs, kwarg_mbs = _capture_model_inputs(fn, model, mbs)
    tp_pg, tp_size, tp_rank = st.groups["tp"], len(st.layout.groups["tp"]), st.layout.tp_rank
    if model.scaled_batch:
        arg_mbs = [scaled_batch.gather_inputs(a, tp_pg, tp_size) for a in arg_mbs]
        kwarg_mbs = [scaled_batch.gather_inputs(k, tp_pg, tp_size) for k in kwarg_mbs]
    results: list[Any] = [None] * len(mbs)
    finalize = model.stage_plan.builder.finalize
    if model.half_dtype is not None:  # fp16/bf16: half inputs in, fp32 outputs out, as without pipelining

        cast = [to_half_inputs(a, k, model.half_dtype) for a, k in zip(arg_mbs, kwarg_mbs)]
        arg_mbs, kwarg_mbs = [a for a, _ in cast], [k for _, k in cast]
        finalize = lambda output, _finalize=finalize: to_float_outputs(_finalize(output))  # noqa: E731

    def loss_fn(output, mb_index: int):
        if model.scaled_batch:
            output = scaled_batch.keep_own_slice(output, tp_pg, tp_rank, tp_size)
        model._pipeline_output = finalize(output)
        model._pipeline_loss = []
        st.microbatch = mb_index
        try:
            a, k = mbs[mb_index]
            results[mb_index] = fn(*a, **k)
        finally:
            model._pipeline_output = None
            st.microbatch = None
        if model._pipeline_loss:
            return model._pipeline_loss[0]
        # a step without model.backward (evaluation): zero gradients, the same schedule on every stage
        outputs = output if isinstance(output, (tuple, list)) else (output,)
        return sum(o.float().sum() for o in outputs if isinstance(o, torch.Tensor)) * 0.0

    train = torch.is_grad_enabled()
    with model.offload_context():
        model.pipeline.run(arg_mbs, kwarg_mbs, loss_fn, train)
    # every pipeline rank returns the same StepOutput: the last stage sends the step function's results
    pp_ranks = st.layout.groups["pp"]
    box = [_to_cpu(results) if model.pipeline.is_last else None]
    with span(PIPELINE_WAIT):  # the last stage waits here while the first drains its backward: bubble too
        dist.broadcast_object_list(box, src=pp_ranks[-1], group=st.groups["pp"])
    return _to_device(box[0], st.device)


def _map_tensors(value, fn):
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_map_tensors(v, fn) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(_map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        items = {k: _map_tensors(v, fn) for k, v in value.items()}
        try:
            return type(value)(**items)
        except TypeError:
            return items
    return value


def _to_cpu(value):
    return _map_tensors(value, lambda t: t.detach().cpu())


def _to_device(value, device):
    return _map_tensors(value, lambda t: t.to(device))
