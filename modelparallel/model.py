"""smp.DistributedModel: tensor parallel (DTensor plans), pipeline stages, DDP over the replica group."""

from __future__ import annotations

import atexit
import contextlib
from typing import TYPE_CHECKING, Any, Iterator

import torch
import torch.distributed as dist
import torch.nn as nn

from sagelaunch.modelparallel import scaled_batch
from sagelaunch.modelparallel.core import _require_init, state
from sagelaunch.modelparallel.errors import SMPValidationError

if TYPE_CHECKING:
    from sagelaunch.modelparallel.pipeline import PipelineRunner


class _ModelCallCaptured(Exception):
    """Raised by model(...) while smp.step records a pipeline's model inputs."""

    def __init__(self, args, kwargs):
        super().__init__("model call captured")
        self.args, self.kwargs = args, kwargs


class DistributedModel(nn.Module):
    def __init__(self, module: nn.Module, trace_device: str = "gpu", trace_execution_times: bool = False,
                 overlapping_allreduce: bool = True, backward_passes_per_step: int = 1,
                 average_grads_across_microbatches: bool = True, bucket_cap_mb: int = 25,
                 trace_memory_usage: bool = False, broadcast_buffers: bool = True,
                 gradient_as_bucket_view: bool = False):
        super().__init__()
        st = _require_init()
        cfg = st.cfg
        if isinstance(module, DistributedModel):
            raise SMPValidationError("the module is already an smp.DistributedModel; wrap the plain nn.Module once")
        self.average_grads_across_microbatches = average_grads_across_microbatches
        tp, pp = cfg.tensor_parallel_degree, cfg.pipeline_parallel_degree
        from sagelaunch.modelparallel.delayed_init import check_delayed, is_delayed, materialize

        check_delayed(module, cfg)
        from sagelaunch.modelparallel.amp import half_dtype

        self.half_dtype = half_dtype(cfg)  # fp16/bf16: SMP casts the whole model (its Bit16_Module)
        if self.half_dtype is not None:
            # with sharded data parallelism the sharded fp32 parameters are the master weights and FSDP2 computes
            # in half precision (sharded_data_parallel.shard_model); otherwise the model itself becomes half
            module.to(dtype=torch.float32 if cfg.sharded_data_parallel_degree > 1 else self.half_dtype)
        if is_delayed(module) and tp == 1:  # with tp > 1, tensor parallelism materialises layer by layer
            materialize(module, st.device)
        if not is_delayed(module):
            module.to(st.device)
        self._modules["module"] = module  # the child `module` (names `module.*`); `self.module` is the view
        from sagelaunch.modelparallel.smp_names import expose_smp_names

        expose_smp_names(module)  # at every degree: scripts walk SMP's tree (transformer.seq_layers) whatever tp is
        # 1. tensor parallel: DTensor plans over the tp sub-mesh
        self.tp_shard_dims: dict[str, int | None] = {}
        if tp > 1:
            from sagelaunch.modelparallel.tensor_parallel import apply_tensor_parallel

            from sagelaunch.modelparallel.delayed_init import same_random_numbers

            with same_random_numbers(st.groups["tp"], st.device) if is_delayed(module) else contextlib.nullcontext():
                self.tp_shard_dims = apply_tensor_parallel(module, st.mesh["T"], tp, st.device)
        # with distributed modules, tp ranks share one (scaled) batch; otherwise tp ranks are plain replicas
        # sharded data parallelism (FSDP2) replaces DDP over the data-parallel ranks (jobspec: tp = pp = 1)
        self.sharded_data_parallel = cfg.sharded_data_parallel_degree > 1
        if self.sharded_data_parallel:
            from sagelaunch.modelparallel.sharded_data_parallel import shard_model, sharding_mesh

            mesh = sharding_mesh(st.device.type, dist.get_world_size(), cfg.sharded_data_parallel_degree)
            shard_model(module, mesh, st.groups["dp"], compute_dtype=self.half_dtype)
        self.scaled_batch = bool(self.tp_shard_dims) and not cfg.prescaled_batch
        self.replica_group_name = "rdp" if self.tp_shard_dims else "dp"
        replica_pg = st.groups[self.replica_group_name]
        self.replica_size = len(st.layout.groups[self.replica_group_name])
        if self.tp_shard_dims and self.replica_size > 1:
            self._broadcast_params(replica_pg, only_dtensor=True)
        # 2. pipeline: as in SMP v1, the model is partitioned at the first @smp.step call (partition()), so that
        #    smp.set_partition / smp.set_activation_checkpointing calls made after wrapping are honoured
        self.pipelined = pp > 1
        self.pipeline: PipelineRunner | None = None  # partition() makes it
        self.partitioned = False
        self._post_partition_hooks: list = []
        self._post_step_hooks: list = []
        self._post_step_hooks_ran = False
        # 3. data parallel over the replica group. pp == 1: DDP (tp-sharded DTensor parameters are ignored by
        #    DDP's reducer, which does not take DTensors, and averaged after the step). pp > 1: the schedules call
        #    backward once per microbatch and stage outside DDP's forward/backward pairing (DDP's bucket rebuild
        #    asserts with several stages per rank), so all stage gradients are averaged after the schedule.
        self.ddp_modules: list[nn.Module] = []
        self.manual_sync = bool(cfg.ddp and self.replica_size > 1 and (pp > 1 or self.tp_shard_dims))
        if pp == 1:
            self.__dict__["_forward_module"] = self._wrap_data_parallel(module, cfg, replica_pg, bucket_cap_mb,
                                                                        broadcast_buffers, gradient_as_bucket_view)
            self.partitioned = True
        self._capturing = False
        self._pipeline_output = None  # the last stage's output while the step function runs as the loss
        self._pipeline_loss: list = []
        self._offloader = None
        if cfg.offload_activations:
            from sagelaunch.modelparallel.offload import ActivationOffloader

            self._offloader = ActivationOffloader(st.device, cfg.activation_loading_horizon)
            atexit.register(self._report_offload)
        st.model = self
        if st.pending_checkpoint is not None and self.partitioned:
            from sagelaunch.modelparallel.checkpointing import _load_pending_model

            _load_pending_model(self)

    def _wrap_data_parallel(self, m: nn.Module, cfg, replica_pg, bucket_cap_mb, broadcast_buffers,
                            gradient_as_bucket_view) -> nn.Module:
        """DDP over the replica group for pp == 1 (not with sharded data parallelism, which is FSDP's)."""
        if not (cfg.ddp and self.replica_size > 1 and not self.sharded_data_parallel):
            return m
        ignore = [n for n, p in m.named_parameters(remove_duplicate=False) if _is_dtensor(p)]  # tied too
        if ignore:
            nn.parallel.DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(m, ignore)
        if len(ignore) == len(list(m.parameters())):
            return m
        m = nn.parallel.DistributedDataParallel(
            m, process_group=replica_pg, bucket_cap_mb=bucket_cap_mb, **_buffer_sync_argument(broadcast_buffers),
            gradient_as_bucket_view=gradient_as_bucket_view,
            device_ids=[state.device.index] if state.device.type == "cuda" else None)
        self.ddp_modules.append(m)
        return m

    def partition(self, sample: tuple[tuple, dict] | None = None) -> None:
        """Split a pipelined model into this rank's stages (once, at the first @smp.step call, as SMP v1 does):
        smp.set_partition marks made after wrapping count. Then the optimizer keeps only this rank's parameters,
        a pending checkpoint loads, and the post-partition hooks run."""
        if self.partitioned:
            return
        from sagelaunch.modelparallel.partitioning import plan_stages
        from sagelaunch.modelparallel.pipeline import PipelineRunner

        st = state
        self.stage_plan = plan_stages(self.get_module(), st.cfg, st.layout.pp_rank, sample)
        if hasattr(self.stage_plan.builder, "share_tied_values"):
            self.stage_plan.builder.share_tied_values(st.groups["pp"])
        if self.replica_size > 1:
            self._broadcast_params(st.groups[self.replica_group_name], only_dtensor=False)
        self.__dict__["_forward_module"] = self.stage_plan.modules[0]
        self.pipeline = PipelineRunner(self.stage_plan.modules, self.stage_plan.stage_indices,
                                       self.stage_plan.num_stages, st.groups["pp"], st.device, st.cfg.pipeline,
                                       scale_grads=self.average_grads_across_microbatches,
                                       active_microbatches=st.cfg.active_microbatches)
        self.partitioned = True
        if st.optimizer is not None:
            st.optimizer.keep_local_parameters(self)
        if st.pending_checkpoint is not None:
            from sagelaunch.modelparallel.checkpointing import _load_pending_model, _load_pending_optimizer

            _load_pending_model(self)
            if st.optimizer is not None:
                _load_pending_optimizer(st.optimizer)
        for hook in self._post_partition_hooks:
            hook(self, st.optimizer)

    # ----- forward / backward
    def forward(self, *args, **kwargs):
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
        if self.half_dtype is not None:
            from sagelaunch.modelparallel.amp import to_float_outputs, to_half_inputs

            args, kwargs = to_half_inputs(args, kwargs, self.half_dtype)
        with self.offload_context():
            out = self._forward_module(*args, **kwargs)
        if self.half_dtype is not None:
            out = to_float_outputs(out)
        if self.scaled_batch:
            out = scaled_batch.keep_own_slice(out, st.groups["tp"], st.layout.tp_rank, len(st.layout.groups["tp"]))
        return out

    def offload_context(self):
        if self._offloader is None:
            return contextlib.nullcontext()
        # activations saved for backward live on the CPU and come back at most activation_loading_horizon
        # modules ahead of backward (offload.py). The layer stack is found now: set_activation_checkpointing
        # may have been called after wrapping.
        from sagelaunch.modelparallel.offload import layer_stack

        self._offloader.attach(layer_stack(self.get_module()))
        return self._offloader.context()

    def _report_offload(self) -> None:
        """One line per rank in the job log at exit: what activation offloading moved, from its counters."""
        stats = self.offload_stats  # registered with the offloader (__init__): never None here
        if stats is None:
            return
        print(f"[smp rank {state.layout.rank}] offload_activations: {stats['packed']} saved tensors "
              f"({stats['packed_bytes']} bytes) offloaded in {stats['groups']} module runs; "
              f"{stats['prefetched']} prefetched within activation_loading_horizon, "
              f"{stats['fetched_on_demand']} fetched on demand", flush=True)

    @property
    def offload_stats(self) -> dict[str, int] | None:
        """What activation offloading did so far (groups, prefetched, fetched_on_demand, max_resident_ahead)."""
        return dict(self._offloader.stats) if self._offloader is not None else None

    def backward(self, tensors, grad_tensors=None):
        """Replaces loss.backward(): gradients are averaged over microbatches (average_grads_across_microbatches)
        and, with fp16, multiplied by the optimizer's loss scale (SMP scales the loss here)."""
        # (a script's own fp16 optimizer scaled the loss already: keeps_master_weights is False)
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

    def sync_context(self, last_microbatch: bool):
        """DDP (or FSDP) reduces only after the last microbatch's backward."""
        if self.sharded_data_parallel:
            from sagelaunch.modelparallel.sharded_data_parallel import gradient_sync

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
        With sharded data parallelism, clip the gradients' global norm to sdp_gradient_clipping as SMP does."""
        if self.pipeline is not None and hasattr(self.stage_plan.builder, "sync_tied_gradients"):
            self.stage_plan.builder.sync_tied_gradients(state.groups["pp"])
        if self.sharded_data_parallel:
            from sagelaunch.modelparallel.sharded_data_parallel import reshard

            reshard(self.get_module())
        if self.sharded_data_parallel and state.cfg.sdp_gradient_clipping > 0 and self.half_dtype is None:
            # (fp16/bf16: the optimizer clips, once the gradients are unscaled: amp_optimizer)
            torch.nn.utils.clip_grad_norm_(self.get_module().parameters(), state.cfg.sdp_gradient_clipping)
        if not self.manual_sync:
            return
        grads = [p.grad.to_local() if _is_dtensor(p.grad) else p.grad for p in self.get_module().parameters()
                 if p.grad is not None and (self.pipeline is not None or _is_dtensor(p))]
        if not grads:
            return
        from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

        flat = _flatten_dense_tensors(grads)
        dist.all_reduce(flat, group=state.groups[self.replica_group_name])
        flat /= self.replica_size
        for g, synced in zip(grads, _unflatten_dense_tensors(flat, grads)):
            g.copy_(synced)

    def _broadcast_params(self, group, only_dtensor: bool) -> None:
        """Start every replica from the replica group's first rank's weights (DDP does this for its own)."""
        src = dist.get_global_rank(group, 0)
        with torch.no_grad():
            for p in self.get_module().parameters():
                if _is_dtensor(p):
                    dist.broadcast(p.to_local(), src=src, group=group)
                elif not only_dtensor:
                    dist.broadcast(p.data, src=src, group=group)

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

    def local_named_buffers(self):
        return self.get_module().named_buffers()

    def local_buffers(self):
        return self.get_module().buffers()

    def local_named_modules(self):
        return self.get_module().named_modules()

    def local_modules(self):
        return self.get_module().modules()

    def distributed_modules(self):
        prefixes = {n.rsplit(".", 1)[0] for n in self.tp_shard_dims}
        return (m for n, m in self.get_module().named_modules() if n in prefixes)

    def is_distributed_parameter(self, param) -> bool:
        if (name := _script_fp16_shard_name(param)) is not None:  # a shard the script's fp16 optimizer holds
            return self.tp_shard_dims.get(name) is not None
        return _is_dtensor(param) and any(p is param for n, p in self.get_module().named_parameters()
                                          if self.tp_shard_dims.get(n) is not None)

    def register_post_partition_hook(self, hook):
        """hook(model, optimizer) runs once the model is partitioned: now when it already is (pp == 1 partitions
        at wrap time), else at the first @smp.step call."""
        if self.partitioned:
            hook(self, state.optimizer)
        else:
            self._post_partition_hooks.append(hook)

    def register_post_step_hook(self, hook):
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
    def local_state_dict(self, *args, **kwargs) -> dict[str, Any]:
        from sagelaunch.modelparallel.checkpointing import local_model_state

        self.partition()  # this rank's part: partition now if no step did yet
        return local_model_state(self)

    def state_dict(self, *args, **kwargs) -> dict[str, Any]:
        from sagelaunch.modelparallel.checkpointing import full_model_state

        return full_model_state(self)

    def load_state_dict(self, state_dict, strict: bool = True, same_partition_load: bool = False):
        """A full state dict (any layout) or this rank's partial one. same_partition_load (SMP: skip re-partitioning
        a partial dict saved with this partition) needs no handling: partial dicts always load into their own
        partition here, and a layout mismatch is refused by name."""
        from sagelaunch.modelparallel.checkpointing import load_model_state

        self.partition()  # SMP loads into the partitioned model: partition now (a no-op once partitioned)
        return load_model_state(self, state_dict, strict)

    def cpu(self):
        return {k: v.cpu() for k, v in self.state_dict().items()}


class _DataParallelView:
    """`DistributedModel.module` (SMP's data-parallel wrapper): attribute reads, writes and calls go to the user's
    model; `.module` is the user's model. Not an nn.Module child of anything (the user's model is registered once,
    as DistributedModel's `module`), so parameter and state-dict names do not change. isinstance checks see the
    user's model's class."""

    __slots__ = ("module",)

    def __init__(self, module: nn.Module):
        object.__setattr__(self, "module", module)

    def __getattr__(self, name: str):
        return getattr(object.__getattribute__(self, "module"), name)

    def __setattr__(self, name: str, value) -> None:
        setattr(object.__getattribute__(self, "module"), name, value)

    def __delattr__(self, name: str) -> None:
        delattr(object.__getattribute__(self, "module"), name)

    @property  # type: ignore[misc]
    def __class__(self):  # isinstance(model.module, nn.Module / the user's class) holds as before
        return type(object.__getattribute__(self, "module"))

    def __dir__(self):
        return sorted(set(dir(object.__getattribute__(self, "module"))) | {"module"})

    def __call__(self, *args, **kwargs):
        return object.__getattribute__(self, "module")(*args, **kwargs)

    def __getitem__(self, idx):
        return object.__getattribute__(self, "module")[idx]

    def __len__(self) -> int:
        return len(object.__getattribute__(self, "module"))

    def __iter__(self):
        return iter(object.__getattribute__(self, "module"))

    def __contains__(self, item) -> bool:
        return item in object.__getattribute__(self, "module")

    def __repr__(self) -> str:
        return repr(object.__getattribute__(self, "module"))

    def __reduce_ex__(self, protocol):  # copy/pickle: a view of the (copied) user's model, not of its class
        return (_DataParallelView, (object.__getattribute__(self, "module"),))


def _buffer_sync_argument(broadcast_buffers: bool) -> dict[str, bool]:
    """SMP's broadcast_buffers is DDP's per-forward buffer sync: torch ≥ 2.13 names it forward_sync_buffers and
    warns (FutureWarning, on every rank) when broadcast_buffers is passed; older torch only knows the old name."""
    import inspect

    if "forward_sync_buffers" in inspect.signature(nn.parallel.DistributedDataParallel.__init__).parameters:
        return {"forward_sync_buffers": broadcast_buffers}
    return {"broadcast_buffers": broadcast_buffers}


def _is_dtensor(t) -> bool:
    from torch.distributed.tensor import DTensor

    return isinstance(t, DTensor)


def _script_fp16_shard_name(tensor) -> str | None:
    """The model parameter whose local shard `tensor` is, when a script's own fp16 optimizer holds it
    (script_fp16_optimizer.py)."""
    return getattr(state.optimizer, "distributed_name", lambda _: None)(tensor)
