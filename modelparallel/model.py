"""smp.DistributedModel: the user's model with SMP's techniques applied (parallelize.py), its forward and backward
under them, and SMP v1's accessors."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Callable, Iterator

import torch
import torch.nn as nn

from sagelaunch.modelparallel.activations.offload import layer_stack
from sagelaunch.modelparallel.checkpointing import (_load_pending_model, _load_pending_optimizer, full_model_state,
                                                    load_model_state, local_model_state)
from sagelaunch.modelparallel.core import _require_init, state
from sagelaunch.modelparallel.data.accumulation import GradientAccumulation
from sagelaunch.modelparallel.data.ddp import average_gradients, is_dtensor
from sagelaunch.modelparallel.data.sharded import gradient_sync, reshard
from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.model_arguments import TracingArguments
from sagelaunch.modelparallel.parallelize import ParallelOptions, parallelize
from sagelaunch.modelparallel.pipeline.apply import apply_pipeline
from sagelaunch.modelparallel.pipeline.capture import _ModelCallCaptured
from sagelaunch.modelparallel.precision.half import to_float_outputs, to_half_inputs
from sagelaunch.modelparallel.tensor import scaled_batch

if TYPE_CHECKING:
    from sagelaunch.modelparallel.optimizer import DistributedOptimizer
    from sagelaunch.modelparallel.pipeline.partitioning import StagePlan
    from sagelaunch.modelparallel.pipeline.runner import PipelineRunner

# a post-partition or post-step hook: hook(model, optimizer)
ModelHook = Callable[["DistributedModel", "DistributedOptimizer | None"], Any]


class DistributedModel(nn.Module):
    """SMP v1's model wrapper: the user's model (the child `module`) with every technique applied by parallelize.

    trace_device, trace_execution_times, trace_memory_usage and overlapping_allreduce are checked and accepted
    where no value changes the result (model_arguments.py says why for each; a value whose effect is not reproduced
    is refused by name); backward_passes_per_step=N all-reduces data-parallel gradients on every N-th backward pass
    only, as SMP v1 does (data/accumulation.py)."""

    def __init__(self, module: nn.Module, trace_device: str = "gpu", trace_execution_times: bool = False,
                 overlapping_allreduce: bool = True, backward_passes_per_step: int = 1,
                 average_grads_across_microbatches: bool = True, bucket_cap_mb: int = 25,
                 trace_memory_usage: bool = False, broadcast_buffers: bool = True,
                 gradient_as_bucket_view: bool = False) -> None:
        super().__init__()
        run = _require_init()
        self.tracing = TracingArguments.checked(
            run.cfg, trace_device=trace_device, trace_execution_times=trace_execution_times,
            overlapping_allreduce=overlapping_allreduce, backward_passes_per_step=backward_passes_per_step,
            trace_memory_usage=trace_memory_usage)
        if isinstance(module, DistributedModel):
            raise SMPValidationError("the module is already an smp.DistributedModel; wrap the plain nn.Module once")
        options = ParallelOptions.from_config(run.cfg, average_grads_across_microbatches, bucket_cap_mb,
                                              broadcast_buffers, gradient_as_bucket_view)
        self._modules["module"] = module  # the child `module` (names `module.*`); `self.module` is the view
        self.parallel = parallelize(module, options, run)
        self.__dict__["_forward_module"] = self.parallel.data.forward_module  # None until partition() if pipelined
        self.partitioned = not self.pipelined  # a pipelined model is split at the first @smp.step (partition())
        self.pipeline: PipelineRunner | None = None
        self.stage_plan: StagePlan | None = None
        self._post_partition_hooks: list[ModelHook] = []
        self._post_step_hooks: list[ModelHook] = []
        self._post_step_hooks_ran = False
        self._capturing = False
        self._pipeline_output: Any = None  # the last stage's output while the step function runs as the loss
        self._pipeline_loss: list[torch.Tensor] = []
        self.accumulation = GradientAccumulation(backward_passes_per_step)
        self._backward_ran = False
        run.model = self
        if run.pending_checkpoint is not None and self.partitioned:
            _load_pending_model(self)

    # ----- what parallelize did, under the names SMP's and this package's readers use
    @property
    def tp_shard_dims(self) -> dict[str, int | None]:
        return self.parallel.tensor.shard_dims

    @property
    def scaled_batch(self) -> bool:
        return self.parallel.tensor.scaled_batch

    @property
    def half_dtype(self) -> torch.dtype | None:
        return self.parallel.half_dtype

    @property
    def pipelined(self) -> bool:
        return self.parallel.options.pipeline.pipelined

    @property
    def average_grads_across_microbatches(self) -> bool:
        return self.parallel.options.pipeline.average_grads_across_microbatches

    @property
    def sharded_data_parallel(self) -> bool:
        return self.parallel.options.data.sharded

    @property
    def replica_group_name(self) -> str:
        return self.parallel.data.replica_group_name

    @property
    def replica_size(self) -> int:
        return self.parallel.data.replica_size

    @property
    def ddp_modules(self) -> list[nn.Module]:
        return self.parallel.data.ddp_modules

    def partition(self, sample: tuple[tuple[Any, ...], dict[str, Any]] | None = None) -> None:
        """Split a pipelined model into this rank's stages (once, at the first @smp.step call, as SMP v1 does):
        smp.set_partition marks made after wrapping count. Then the optimizer keeps only this rank's parameters,
        a pending checkpoint loads, and the post-partition hooks run."""
        if self.partitioned:
            return
        st = state
        pipeline = apply_pipeline(self.get_module(), self.parallel.options.pipeline, self.parallel.data, st, sample)
        self.stage_plan = pipeline.stage_plan
        self.__dict__["_forward_module"] = pipeline.stage_plan.modules[0]
        self.pipeline = pipeline.runner
        self.partitioned = True
        if st.optimizer is not None:
            st.optimizer.keep_local_parameters(self)
        if st.pending_checkpoint is not None:
            _load_pending_model(self)
            if st.optimizer is not None:
                _load_pending_optimizer(st.optimizer)
        for hook in self._post_partition_hooks:
            hook(self, st.optimizer)

    # ----- forward / backward
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        st = state
        if self.pipelined:
            if self._capturing:
                raise _ModelCallCaptured(args, kwargs)
            if self._pipeline_output is not None:
                return self._pipeline_output
            raise SMPValidationError("with pipeline_parallel_degree > 1, call the model inside an @smp.step function")
        if self.scaled_batch:
            tp_pg, tp_size = st.groups["tp"], len(st.layout.groups["tp"])
            args = scaled_batch.gather_inputs(args, tp_pg, tp_size)
            kwargs = scaled_batch.gather_inputs(kwargs, tp_pg, tp_size)
        half = self.half_dtype
        if half is not None:
            args, kwargs = to_half_inputs(args, kwargs, half)
        with self.offload_context():
            out = self._forward_module(*args, **kwargs)
        if half is not None:
            out = to_float_outputs(out)
        if self.scaled_batch:
            out = scaled_batch.keep_own_slice(out, st.groups["tp"], st.layout.tp_rank, len(st.layout.groups["tp"]))
        return out

    def offload_context(self) -> contextlib.AbstractContextManager[Any]:
        offloader = self.parallel.offloader
        if offloader is None:
            return contextlib.nullcontext()
        # activations saved for backward live on the CPU and come back at most activation_loading_horizon
        # modules ahead of backward (offload.py). The layer stack is found now: set_activation_checkpointing
        # may have been called after wrapping.
        offloader.attach(layer_stack(self.get_module()))
        return offloader.context()

    @property
    def offload_stats(self) -> dict[str, int] | None:
        """What activation offloading did so far (groups, prefetched, fetched_on_demand, max_resident_ahead)."""
        offloader = self.parallel.offloader
        return dict(offloader.stats) if offloader is not None else None

    def backward(self, tensors: torch.Tensor, grad_tensors: Any = None) -> None:
        """Replaces loss.backward(): gradients are averaged over microbatches (average_grads_across_microbatches)
        and, with fp16, multiplied by the optimizer's loss scale (SMP scales the loss here)."""
        # (a script's own fp16 optimizer scaled the loss already: keeps_master_weights is False)
        self._backward_ran = True
        opt = state.optimizer
        loss_scale = opt.loss_scale if opt is not None and opt.keeps_master_weights else 1.0
        if self.pipelined:
            if grad_tensors is not None:
                raise SMPValidationError("model.backward(tensors, grad_tensors) is not supported with pipelining; "
                                         "call model.backward(loss) with a scalar loss")
            self._pipeline_loss.append(tensors * loss_scale if loss_scale != 1.0 else tensors)
            return
        n = state.num_microbatches if state.microbatch is not None else 1
        scale = (1.0 / n if self.average_grads_across_microbatches and n > 1 else 1.0) * loss_scale
        if grad_tensors is None:
            torch.autograd.backward(tensors * scale if scale != 1.0 else tensors)
        else:
            grads = grad_tensors if isinstance(grad_tensors, (list, tuple)) else [grad_tensors]
            torch.autograd.backward(tensors, [g * scale for g in grads] if scale != 1.0 else grad_tensors)

    def begin_step(self) -> None:
        """An @smp.step call starts: decide whether its backward all-reduces (backward_passes_per_step)."""
        # a step run with gradients enabled is a backward pass: every rank sees that (a pipelined step calls
        # model.backward on its last stage only); evaluation under torch.no_grad is not
        self._backward_ran = torch.is_grad_enabled()
        if self.accumulation.unreduced == 0 and self.stage_plan is not None \
                and hasattr(self.stage_plan.builder, "keep_summed_tied_gradients"):
            self.stage_plan.builder.keep_summed_tied_gradients()  # the tied sum at the end adds only this window's
        self.accumulation.begin_step()

    def sync_context(self, last_microbatch: bool) -> contextlib.AbstractContextManager[Any]:
        """DDP (or FSDP) reduces only after the last microbatch's backward, of every backward_passes_per_step-th
        step."""
        last_microbatch = last_microbatch and self.accumulation.reduce_now
        if self.sharded_data_parallel:
            gradient_sync(self.get_module(), last_microbatch)
            return contextlib.nullcontext()
        if last_microbatch or not self.ddp_modules or self.pipelined:
            return contextlib.nullcontext()
        stack = contextlib.ExitStack()
        for m in self.ddp_modules:
            stack.enter_context(m.no_sync())
        return stack

    def finish_step(self) -> None:
        """Average over the replica group the gradients DDP did not reduce (DTensor ones; all when pipelined).
        With sharded data parallelism, clip the gradients' global norm to sdp_gradient_clipping as SMP does.
        Between backward_passes_per_step-th steps the gradients stay local (and unclipped) and accumulate."""
        data_options = self.parallel.options.data
        if data_options.sharded:
            reshard(self.get_module())
        reduce_now = self.accumulation.reduce_now and self._backward_ran
        self.accumulation.end_step(self._backward_ran)
        if not reduce_now:  # an evaluation step, or a backward pass that only accumulates
            return
        if self.stage_plan is not None and hasattr(self.stage_plan.builder, "sync_tied_gradients"):
            self.stage_plan.builder.sync_tied_gradients(state.groups["pp"])
        if data_options.sharded and data_options.sdp_gradient_clipping > 0 and self.half_dtype is None:
            # (fp16/bf16: the optimizer clips, once the gradients are unscaled: amp_optimizer)
            torch.nn.utils.clip_grad_norm_(self.get_module().parameters(), data_options.sdp_gradient_clipping)
        if not self.parallel.data.manual_sync:
            return
        grads = [p.grad.to_local() if is_dtensor(p.grad) else p.grad for p in self.get_module().parameters()
                 if p.grad is not None and (self.pipeline is not None or is_dtensor(p))]
        if grads:
            average_gradients(grads, state.groups[self.replica_group_name], self.replica_size)

    # ----- SMP accessors
    def get_module(self) -> nn.Module:
        """The user's model (registered as the child `module`: parameter names stay `module.*`)."""
        return self._modules["module"]

    @property
    def module(self) -> _DataParallelView:
        """SMP v1's `model.module`: its data-parallel wrapper, whose `.module` is the user's model. Here a view
        that reads and writes through to the user's model (so `model.module.<attr>` works as before) and whose
        `.module` is the user's model itself: `model.module.module.config`, and `unwrap_model` loops
        (`while hasattr(m, "module")`) end at the user's model."""
        inner = self._modules.get("module")
        if inner is None:
            raise AttributeError("'DistributedModel' object has no attribute 'module' (not wrapped yet)")
        view = self.__dict__.get("_module_view")
        if view is None or object.__getattribute__(view, "module") is not inner:
            view = _DataParallelView(inner)
            self.__dict__["_module_view"] = view
        return view

    def local_named_parameters(self) -> Iterator[tuple[str, nn.Parameter]]:
        return self.get_module().named_parameters()

    def local_parameters(self) -> Iterator[nn.Parameter]:
        return self.get_module().parameters()

    def local_named_buffers(self) -> Iterator[tuple[str, torch.Tensor]]:
        return self.get_module().named_buffers()

    def local_buffers(self) -> Iterator[torch.Tensor]:
        return self.get_module().buffers()

    def local_named_modules(self) -> Iterator[tuple[str, nn.Module]]:
        return self.get_module().named_modules()

    def local_modules(self) -> Iterator[nn.Module]:
        return self.get_module().modules()

    def distributed_modules(self) -> Iterator[nn.Module]:
        prefixes = {n.rsplit(".", 1)[0] for n in self.tp_shard_dims}
        return (m for n, m in self.get_module().named_modules() if n in prefixes)

    def is_distributed_parameter(self, param: Any) -> bool:
        if (name := _script_fp16_shard_name(param)) is not None:  # a shard the script's fp16 optimizer holds
            return self.tp_shard_dims.get(name) is not None
        return is_dtensor(param) and any(p is param for n, p in self.get_module().named_parameters()
                                          if self.tp_shard_dims.get(n) is not None)

    def register_post_partition_hook(self, hook: ModelHook) -> None:
        """hook(model, optimizer) runs once the model is partitioned: now when it already is (pp == 1 partitions
        at wrap time), else at the first @smp.step call."""
        if self.partitioned:
            hook(self, state.optimizer)
        else:
            self._post_partition_hooks.append(hook)

    def register_post_step_hook(self, hook: ModelHook) -> None:
        """hook(model, optimizer) runs once, at the end of the first @smp.step call, or now when a step already
        ran (SMP v1: DistributedModel calls its post-step hooks once; the fp16 examples build their fp32 master
        weights in one, which must not run again)."""
        if self._post_step_hooks_ran:
            hook(self, state.optimizer)
        else:
            self._post_step_hooks.append(hook)

    def run_post_step_hooks(self) -> None:
        if self._post_step_hooks_ran:
            return
        self._post_step_hooks_ran = True
        for hook in self._post_step_hooks:
            hook(self, state.optimizer)

    # ----- state dicts (see checkpointing.py for the gathering)
    def local_state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        self.partition()  # this rank's part: partition now if no step did yet
        return local_model_state(self)

    def state_dict(self, *args: Any, **kwargs: Any) -> dict[str, Any]:  # SMP's: the gathered full state dict
        return full_model_state(self)

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True,
                        same_partition_load: bool = False) -> Any:
        """A full state dict (any layout) or this rank's partial one. same_partition_load (SMP: skip re-partitioning
        a partial dict saved with this partition) needs no handling: partial dicts always load into their own
        partition here, and a layout mismatch is refused by name."""
        self.partition()  # SMP loads into the partitioned model: partition now (a no-op once partitioned)
        return load_model_state(self, state_dict, strict)

    def cpu(self) -> dict[str, torch.Tensor]:  # SMP's: the state dict on the CPU
        return {k: v.cpu() for k, v in self.state_dict().items()}


class _DataParallelView:
    """`DistributedModel.module` (SMP's data-parallel wrapper): attribute reads, writes and calls go to the user's
    model; `.module` is the user's model. Not an nn.Module child of anything (the user's model is registered once,
    as DistributedModel's `module`), so parameter and state-dict names do not change. isinstance checks see the
    user's model's class."""

    __slots__ = ("module",)

    def __init__(self, module: nn.Module) -> None:
        object.__setattr__(self, "module", module)

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "module"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "module"), name, value)

    def __delattr__(self, name: str) -> None:
        delattr(object.__getattribute__(self, "module"), name)

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(model.module, nn.Module / the user's class) holds as before
        return type(object.__getattribute__(self, "module"))

    def __dir__(self) -> list[str]:
        return sorted(set(dir(object.__getattribute__(self, "module"))) | {"module"})

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return object.__getattribute__(self, "module")(*args, **kwargs)

    def __getitem__(self, idx: Any) -> Any:
        return object.__getattribute__(self, "module")[idx]

    def __len__(self) -> int:
        return len(object.__getattribute__(self, "module"))

    def __iter__(self) -> Iterator[Any]:
        return iter(object.__getattribute__(self, "module"))

    def __contains__(self, item: Any) -> bool:
        return item in object.__getattribute__(self, "module")

    def __repr__(self) -> str:
        return repr(object.__getattribute__(self, "module"))

    def __reduce_ex__(self, protocol: Any) -> tuple[type[_DataParallelView], tuple[nn.Module]]:  # copy/pickle: a view of the (copied) user's model, not of its class
        return (_DataParallelView, (object.__getattribute__(self, "module"),))


def _script_fp16_shard_name(tensor: Any) -> str | None:
    """The model parameter whose local shard `tensor` is, when a script's own fp16 optimizer holds it
    (script_fp16_optimizer.py)."""
    name: str | None = getattr(state.optimizer, "distributed_name", lambda _: None)(tensor)
    return name
