"""smp.DistributedOptimizer: checks the optimizer was made from the wrapped model's parameters, keeps this rank's
parameters once the model is partitioned, and with shard_optimizer_state shards its state over the replica group
(data/optimizer_sharding.py); with fp16/bf16 it holds fp32 master weights (precision/amp_optimizer.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from sagelaunch.modelparallel.checkpointing import _load_pending_optimizer, full_optimizer_state, load_full_optimizer_state
from sagelaunch.modelparallel.core import _require_init, state
from sagelaunch.modelparallel.core.comm import CommGroup, agree_on_error
from sagelaunch.modelparallel.data.optimizer_sharding import shard_optimizer_state
from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.precision.amp_optimizer import MasterWeights, make_scaler

if TYPE_CHECKING:
    from sagelaunch.modelparallel.model import DistributedModel

MIXED_KEY = "_smp_fp16_master_weights"  # fp32 masters and the loss scaler in a saved optimizer state


class DistributedOptimizer(torch.optim.Optimizer):
    """A torch.optim.Optimizer (LR schedulers take it) whose parameter groups and state are the wrapped
    optimizer's, or, with shard_optimizer_state, the ZeroRedundancyOptimizer's that holds this rank's shard.
    Optimizer.__init__ is not called: it would build parameter groups of its own beside the wrapped ones."""

    keeps_master_weights = True  # fp16/bf16: fp32 masters here (False: the script's optimizer keeps them)

    def __new__(cls, optimizer: Any = None, *args: Any, **kwargs: Any):
        """The subclass that accepts this optimizer serves it (script_fp16_optimizer.py: a script's own fp16
        optimizer); smp.DistributedOptimizer is imported through that module, so its variant is known."""
        if cls is DistributedOptimizer:
            for variant in cls.__subclasses__():
                if variant.accepts(optimizer):
                    return super().__new__(variant)
        return super().__new__(cls)

    @classmethod
    def accepts(cls, optimizer: object) -> bool:
        return False

    def __init__(self, optimizer: torch.optim.Optimizer, static_loss_scale: float | None = 1.0,
                 dynamic_loss_scale: bool = False, **dynamic_loss_args: Any):
        """The loss-scaling arguments matter with fp16 (amp_optimizer); SMP's scripts pass them as
        dynamic_loss_args={...} or as keywords. Without fp16/bf16 training is fp32 and they have no effect."""
        st = _require_init()
        model = st.model
        error = None
        if model is None:
            error = ("smp.DistributedOptimizer: wrap the model with smp.DistributedModel first, then create the "
                     "optimizer from model.parameters(), then wrap it")
        else:
            local = {id(p) for p in model.local_parameters()}
            foreign = sum(1 for g in optimizer.param_groups for p in g["params"] if id(p) not in local)
            if foreign:
                error = (
                    "smp.DistributedOptimizer: the optimizer was created before smp.DistributedModel wrapped the model "
                    f"({foreign} of its parameters are not the wrapped model's); SMP requires this order: "
                    "model = smp.DistributedModel(model); optimizer = torch.optim.X(model.parameters()); "
                    "optimizer = smp.DistributedOptimizer(optimizer)"
                )
        agree_on_error(error, CommGroup.WORLD)  # every rank raises the same message
        assert model is not None, "no model is an error, raised above"
        self.model: DistributedModel = model
        self.mixed = None  # fp16/bf16: fp32 master weights in the optimizer's parameter groups
        if (st.cfg.fp16 or st.cfg.bf16) and self.keeps_master_weights:
            scaler = make_scaler(st.cfg.fp16, static_loss_scale, dynamic_loss_scale,
                                 {**(dynamic_loss_args.pop("dynamic_loss_args", None) or {}), **dynamic_loss_args})
            self.mixed = MasterWeights(optimizer, model, scaler, scale_loss=st.cfg.fp16)
        self.sharded = bool(st.cfg.shard_optimizer_state) and model.replica_size > 1
        self.optimizer = optimizer
        st.optimizer = self
        if model.partitioned:
            self.keep_local_parameters(model)
        if st.pending_checkpoint is not None:
            _load_pending_optimizer(self)

    def keep_local_parameters(self, model) -> None:
        """Once the model is partitioned: every parameter group keeps only this rank's parameters (a pipelined
        model is partitioned at the first @smp.step, after the script built its optimizer from all of them), and
        with shard_optimizer_state the state is sharded over the replica group, each group with its own options
        (weight decay, lr, ...)."""
        local = self._local_ids(model)
        for group in self.optimizer.param_groups:
            group["params"] = [p for p in group["params"] if id(p) in local]
        if self.sharded:
            self.optimizer = shard_optimizer_state(self.optimizer, state.groups[model.replica_group_name])

    def _local_ids(self, model) -> set[int]:
        """The ids of what the parameter groups may hold of this rank's parameters."""
        local = {id(p) for p in model.local_parameters()}
        if self.mixed is not None:  # fp16/bf16: the groups hold fp32 masters, each local when its half twin is
            local |= self.mixed.keep_local(local)
        return local

    # the torch.optim.Optimizer surface
    @property
    def param_groups(self):
        return self.optimizer.param_groups

    @property
    def state(self):
        return self.optimizer.state

    @property
    def defaults(self):
        return self.optimizer.defaults


    def add_param_group(self, param_group: dict[str, Any]) -> None:
        self.optimizer.add_param_group(param_group)

    def step(self, closure=None):
        self._check_reduced()
        if self.mixed is not None:
            if closure is not None:
                raise SMPValidationError("smp.DistributedOptimizer.step(closure) is not supported with fp16/bf16 "
                                         "(as in SMP); call model.backward(loss) in the @smp.step function, then "
                                         "optimizer.step()")
            return self.mixed.step(self.optimizer.step)
        return self.optimizer.step(closure) if closure is not None else self.optimizer.step()

    def zero_grad(self, set_to_none: bool = True):
        self._restart_accumulation()
        self.optimizer.zero_grad(set_to_none=set_to_none)
        if self.mixed is not None:
            self.mixed.zero_grad(set_to_none)

    @staticmethod
    def _check_reduced() -> None:
        """backward_passes_per_step: only all-reduced gradients may be applied (data/accumulation.py)."""
        if state.model is not None:
            state.model.accumulation.check_reduced()

    @staticmethod
    def _restart_accumulation() -> None:
        """zero_grad starts a new accumulation window (backward_passes_per_step)."""
        if state.model is not None:
            state.model.accumulation.restart()

    # SMP's fp16/bf16 optimizer surface (fp32 master weights and loss scaling: amp_optimizer.py)
    def _mixed_precision(self, name: str):
        if self.mixed is None:  # an AttributeError: hasattr(optimizer, "loss_scaler") stays False in fp32
            raise AttributeError(f"smp.DistributedOptimizer.{name} exists with fp16 or bf16 training only; set "
                                 "\"fp16\": true (or \"bf16\": true) in mp_parameters / smp.init")
        return self.mixed

    def backward(self, loss, update_master_grads: bool = True, retain_graph: bool = False):
        """SMP's optimizer.backward(loss): the loss scaled by the current loss scale, through model.backward."""
        mixed = self._mixed_precision("backward")
        if retain_graph:
            raise SMPValidationError("smp.DistributedOptimizer.backward(loss, retain_graph=True) is not supported "
                                     "(model.backward frees the graph); compute every loss into one before backward")
        self.model.backward(loss)
        if update_master_grads and state.microbatch is None:  # inside @smp.step the step is not over yet
            mixed.update_master_grads()

    def update_master_grads(self) -> None:
        self._mixed_precision("update_master_grads").update_master_grads()

    def clip_master_grads(self, max_norm: float, norm_type: float = 2):
        return self._mixed_precision("clip_master_grads").clip_master_grads(max_norm, norm_type)

    def reload_model_params(self) -> None:
        self._mixed_precision("reload_model_params").model_params_to_master_params()

    @property
    def overflow(self) -> bool:
        return self.mixed.overflow if self.mixed is not None else False

    @property
    def loss_scaler(self):
        return self._mixed_precision("loss_scaler").loss_scaler

    @property
    def loss_scale(self) -> float:
        return self.mixed.loss_scale if self.mixed is not None else 1.0

    @property
    def fp16_groups(self) -> list[list[torch.nn.Parameter]]:
        """SMP's name for the model's parameters per group: the half ones with fp16/bf16, else every one (the GPT-2
        example's sharded-DP checkpoint records their full shapes from it in fp32 training too)."""
        if self.mixed is not None:
            return self.mixed.fp16_groups
        return [list(g["params"]) for g in self.param_groups]

    @property
    def fp32_from_fp16_groups(self):
        return self._mixed_precision("fp32_from_fp16_groups").fp32_from_fp16_groups

    @property
    def fp32_from_fp32_groups(self):
        return self._mixed_precision("fp32_from_fp32_groups").fp32_from_fp32_groups

    def local_optimizer(self) -> torch.optim.Optimizer:
        """The optimizer that holds this rank's state (the ZeRO shard's optimizer when sharded)."""
        return self.optimizer.optim if self.sharded else self.optimizer

    def local_state_bytes(self) -> int:
        total = 0
        for per_param in self.local_optimizer().state.values():
            for v in per_param.values():
                if isinstance(v, torch.Tensor):
                    t = v.to_local() if hasattr(v, "to_local") else v
                    total += t.numel() * t.element_size()
        return total

    def local_state_dict(self) -> dict[str, Any]:
        sd = dict(self.local_optimizer().state_dict())
        sd["_smp_is_partial"] = True
        if self.mixed is not None:
            sd[MIXED_KEY] = self.mixed.state_dict()
        return sd

    def state_dict(self) -> dict[str, Any]:
        return full_optimizer_state(self)

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.model.partition()  # into this rank's parameters: partition now if no step did yet
        sd = dict(state_dict)
        partial = sd.pop("_smp_is_partial", False)
        mixed = sd.pop(MIXED_KEY, None)
        if mixed is not None and self.mixed is not None:
            self.mixed.load_state_dict(mixed)
        if not partial:  # the gathered state_dict(): any rank takes its own part

            load_full_optimizer_state(self, sd)
            return
        self.local_optimizer().load_state_dict(sd)

    def __getattr__(self, name):
        return getattr(self.__dict__["optimizer"], name)

