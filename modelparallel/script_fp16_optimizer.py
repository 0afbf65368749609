"""smp.DistributedOptimizer over a script's own fp16 optimizer: SMP v1 examples of 2021-2022 (the GPT-2 example's
fp16/fp16.py, a Megatron-style FP16_Optimizer made with use_smp=True) keep the fp32 master weights and the loss
scaler themselves and pass that object to smp.DistributedOptimizer. The masters are then the script's: this wrapper
forwards the fp16 surface (backward, zero_grad, update_master_grads, clip_master_grads, step, overflow, ...) to it
instead of keeping masters of its own, which would round every update twice. What it cannot honour it refuses by
name: sharded optimizer state (the script's masters are not ZeRO's shards). Pipelined, each stage's script optimizer
holds that stage's masters; a parameter tied across stages is marked `shared` on its later holders, as the script's
gradient norm expects (_mark_shared_masters).

Tensor parallelism: in SMP a distributed parameter is a plain tensor holding this rank's shard, and the script's
optimizer relies on that (numel() sizes its fp32 buffer, copy_ fills it, type() tells fp16 from fp32). Here tp
parameters are DTensors, so the script's optimizer is given, in their place, leaf parameters that share each
DTensor's local storage (its updates land in the model), whose .grad is the DTensor gradient's local part (set
before the script reads gradients), and that the model answers for in is_distributed_parameter and
smp.utils.get_distribution_axis."""

from __future__ import annotations

from typing import Any

import torch

from sagelaunch.modelparallel.core import state
from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.data.ddp import is_dtensor as _is_dtensor
from sagelaunch.modelparallel.optimizer import DistributedOptimizer

# What SMP's own FP16_Optimizer and the examples' copies of it have, and a torch.optim.Optimizer lacks
SCRIPT_FP16_SURFACE = ("init_master_params", "update_master_grads", "clip_master_grads", "loss_scaler")


__all__ = ["DistributedOptimizer", "ScriptFP16DistributedOptimizer"]  # smp.DistributedOptimizer comes from here


class ScriptFP16DistributedOptimizer(DistributedOptimizer):
    """The DistributedOptimizer made when the script wraps its own fp16 optimizer (`self.optimizer` is that object;
    its `.optimizer` is the torch optimizer that holds the fp32 masters once init_master_params ran)."""

    keeps_master_weights = False

    @classmethod
    def accepts(cls, optimizer: object) -> bool:
        return not isinstance(optimizer, torch.optim.Optimizer) and all(
            hasattr(optimizer, name) for name in SCRIPT_FP16_SURFACE)

    def __init__(self, optimizer: Any, *args: Any, **kwargs: Any):
        from sagelaunch.modelparallel.core import _require_init  # lazy: as the other smp entry points

        cfg = _require_init().cfg
        if cfg.shard_optimizer_state:
            raise SMPValidationError(
                "smp.DistributedOptimizer: shard_optimizer_state=True with the script's own fp16 optimizer "
                f"({type(optimizer).__name__}) is not supported: its fp32 master weights are not sharded here. "
                "Set shard_optimizer_state to false, or pass the torch optimizer itself with \"fp16\": true "
                "(smp.DistributedOptimizer then keeps the fp32 masters)")
        if args or kwargs:
            raise SMPValidationError(
                f"smp.DistributedOptimizer({type(optimizer).__name__}, ...): loss-scaling arguments "
                f"{sorted(kwargs) or list(args)} do not apply: the script's fp16 optimizer scales the loss itself; "
                "pass them to it instead")
        # id(local shard) -> (the shard, its DTensor, the DTensor's name in the model); before the base class's
        # __init__, which reads it when the model is partitioned already (keep_local_parameters)
        self.local_shards: dict[int, tuple[torch.nn.Parameter, Any, str]] = {}
        super().__init__(optimizer)
        names = {id(param): name for name, param in self.model.get_module().named_parameters()}
        for group in optimizer.optimizer.param_groups:
            group["params"] = [self._local_shard(param, names[id(param)]) if _is_dtensor(param) else param
                               for param in group["params"]]

    def _local_shard(self, param: Any, name: str) -> torch.nn.Parameter:
        shard = torch.nn.Parameter(param._local_tensor, requires_grad=param.requires_grad)
        self.local_shards[id(shard)] = (shard, param, name)
        return shard

    def _local_ids(self, model: Any) -> set[int]:
        """Pipelined and tensor-parallel: the groups hold the local shards standing in for this stage's DTensors
        (their ids are not the model's); the other stages' shards go with their DTensors."""
        local = super()._local_ids(model)
        for key, (_, param, _) in list(self.local_shards.items()):
            if id(param) in local:
                local.add(key)
            else:
                del self.local_shards[key]
        return local

    def distributed_name(self, tensor: object) -> str | None:
        """The model parameter name whose local shard `tensor` is (one this wrapper made), else None."""
        found = self.local_shards.get(id(tensor))
        return found[2] if found is not None else None

    def _shard_grads_from_model(self) -> None:
        """Each local shard's .grad: its DTensor's gradient, local part (placed as the parameter is)."""
        for shard, param, _ in self.local_shards.values():
            grad = param.grad
            if grad is not None and tuple(grad.placements) != tuple(param.placements):
                grad = grad.redistribute(param.device_mesh, param.placements)
            shard.grad = grad.to_local() if grad is not None else None

    def zero_grad(self, set_to_none: bool = True, set_grads_to_None: bool | None = None) -> None:
        """SMP's fp16 keyword is set_grads_to_None; torch's set_to_none means the same."""
        to_none = set_to_none if set_grads_to_None is None else set_grads_to_None
        self._restart_accumulation()
        self.optimizer.zero_grad(set_grads_to_None=to_none)
        for _, param, _ in self.local_shards.values():  # the DTensors' own gradients, as the shards'
            if to_none:
                param.grad = None
            elif param.grad is not None:
                param.grad.detach_()
                param.grad.zero_()

    def step(self, closure: Any = None) -> Any:
        self._check_reduced()
        return self.optimizer.step(closure)

    def backward(self, loss: torch.Tensor, update_master_grads: bool = True, retain_graph: bool = False) -> None:
        self.optimizer.backward(loss, update_master_grads=False, retain_graph=retain_graph)
        if update_master_grads:
            if state.microbatch is not None:
                raise SMPValidationError(
                    "optimizer.backward(loss, update_master_grads=True) inside an @smp.step function: the step's "
                    "gradients are complete only after it returns; pass update_master_grads=False and call "
                    "optimizer.update_master_grads() after the step (as SMP's examples do)")
            self.update_master_grads()

    def update_master_grads(self) -> None:
        self._shard_grads_from_model()
        self.optimizer.update_master_grads()

    def clip_master_grads(self, max_norm: float, norm_type: float = 2) -> Any:
        self._mark_shared_masters()
        return self.optimizer.clip_master_grads(max_norm, norm_type)

    def _mark_shared_masters(self) -> None:
        """The script's gradient norm skips masters marked `shared` (Megatron's mark): a master whose model
        parameter is a tied replica on a later pipeline stage (pipeline/stack.py) gets the mark, so the norm summed
        over the stages counts that gradient once, as one process does."""
        for params, masters in zip(self.optimizer.fp16_groups, self.optimizer.fp32_from_fp16_groups):
            for param, master in zip(params, masters):
                found = self.local_shards.get(id(param))
                if getattr(found[1] if found is not None else param, "shared", False):
                    master.shared = True

    def reload_model_params(self) -> None:
        self.optimizer.reload_model_params()

    @property
    def overflow(self) -> bool:
        return bool(self.optimizer.overflow)

    @property
    def loss_scaler(self) -> Any:
        return self.optimizer.loss_scaler

    @property
    def loss_scale(self) -> float:
        return float(self.optimizer.loss_scale)

    @property
    def fp16_groups(self) -> list[list[torch.nn.Parameter]]:
        return list(self.optimizer.fp16_groups)

    @property
    def fp32_from_fp16_groups(self) -> Any:
        return self.optimizer.fp32_from_fp16_groups

    @property
    def fp32_from_fp32_groups(self) -> Any:
        return self.optimizer.fp32_from_fp32_groups

    def local_optimizer(self) -> torch.optim.Optimizer:
        return self.optimizer.optimizer

    def local_state_dict(self, gather_if_shard: bool = False) -> dict[str, Any]:
        """This rank's torch optimizer state (over the fp32 masters); the script saves the masters and its loss
        scaler beside it. gather_if_shard gathers sharded state, which is refused above: nothing to gather."""
        sd = dict(self.local_optimizer().state_dict())
        sd["_smp_is_partial"] = True
        return sd

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        sd = dict(state_dict)
        if not sd.pop("_smp_is_partial", False):
            raise SMPValidationError(
                "smp.DistributedOptimizer.load_state_dict: a full (gathered) optimizer state with the script's own "
                "fp16 optimizer is not supported; load the partial state each rank saved")
        self.local_optimizer().load_state_dict(sd)
