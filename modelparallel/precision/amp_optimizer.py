"""SMP v1's fp16/bf16 optimizer: fp32 master weights behind smp.DistributedOptimizer (SMP's Bit16_Optimizer).

The model holds half-precision parameters (fp16 or bf16) and computes in them; the wrapped torch optimizer's
parameter groups are given fp32 master copies in their place, so its state and updates are fp32. Each step:
the model's (loss-scaled) half gradients become fp32 master gradients (divided by the loss scale with fp16; bf16
has fp32's exponent range and is not scaled), a non-finite gradient on any rank makes every rank skip the step
and lets the dynamic scaler back off, otherwise the optimizer steps the masters and the masters are copied into
the model's parameters. Names follow SMP/apex (fp16_groups, fp32_from_fp16_groups, overflow, loss_scaler, …).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator

import torch
import torch.distributed as dist
import torch.nn as nn

from sagelaunch.modelparallel.precision.amp_scaler import DynamicLossScaler, LossScaler
from sagelaunch.modelparallel.core import state
from sagelaunch.modelparallel.errors import SMPValidationError

if TYPE_CHECKING:
    from sagelaunch.modelparallel.model import DistributedModel

HALF_DTYPES = (torch.float16, torch.bfloat16)


def _local(t: torch.Tensor) -> torch.Tensor:
    return t.to_local() if hasattr(t, "to_local") else t


def _is_sharded(t: torch.Tensor) -> bool:
    """A tensor-parallel shard: each tp rank holds different values (Shard, and the fused c_attn's _StridedShard,
    which Placement.is_shard() does not count)."""
    return any(not p.is_replicate() for p in getattr(t, "placements", ()))


def make_scaler(fp16: bool, static_loss_scale: float | None, dynamic_loss_scale: bool, dynamic_loss_args: dict) -> LossScaler:
    if not fp16:  # bf16: no loss scaling, as SMP (its master gradients are the model's, unscaled)
        return LossScaler(1.0)
    if dynamic_loss_scale:
        return DynamicLossScaler(**dynamic_loss_args)
    if static_loss_scale is None:
        raise SMPValidationError("smp.DistributedOptimizer(static_loss_scale=None, dynamic_loss_scale=False) with "
                                 "fp16: give a static scale (e.g. static_loss_scale=128.0) or dynamic_loss_scale=True")
    return LossScaler(static_loss_scale)


class MasterWeights:
    _weights: dict[int, float] | None = None  # 1/holders of tied parameters' masters, once _tied_weights worked them out
    _masters: dict[int, nn.Parameter] | None = None  # each half parameter's master by id, once master_of needed it

    def __init__(self, optimizer: torch.optim.Optimizer, model: DistributedModel, scaler: LossScaler,
                 scale_loss: bool) -> None:
        self.model, self.loss_scaler, self.scale_loss = model, scaler, scale_loss
        self.fp16_groups: list[list[nn.Parameter]] = []
        self.fp32_from_fp16_groups: list[list[nn.Parameter]] = []
        self.fp32_from_fp32_groups: list[list[nn.Parameter]] = []
        for group in optimizer.param_groups:
            half, masters, full = [], [], []
            for i, p in enumerate(group["params"]):
                if p.dtype in HALF_DTYPES:
                    master = nn.Parameter(p.detach().clone().float(), requires_grad=p.requires_grad)
                    group["params"][i] = master
                    if p in optimizer.state:  # state made before wrapping follows its parameter
                        optimizer.state[master] = optimizer.state.pop(p)
                    half.append(p)
                    masters.append(master)
                else:
                    full.append(p)
            self.fp16_groups.append(half)
            self.fp32_from_fp16_groups.append(masters)
            self.fp32_from_fp32_groups.append(full)
        if optimizer.state:  # recast that state to fp32 through the optimizer's own loading
            optimizer.load_state_dict(optimizer.state_dict())
        self.overflow = False
        self._grads_ready = False

    def keep_local(self, local: set[int]) -> set[int]:
        """Once a pipelined model is partitioned: only this rank's parameters (ids in `local`) and their masters
        stay; returns the ids of the masters kept."""
        for i, (half, masters) in enumerate(zip(self.fp16_groups, self.fp32_from_fp16_groups)):
            kept = [(h, m) for h, m in zip(half, masters) if id(h) in local]
            self.fp16_groups[i], self.fp32_from_fp16_groups[i] = [h for h, _ in kept], [m for _, m in kept]
        self.fp32_from_fp32_groups = [[p for p in group if id(p) in local] for group in self.fp32_from_fp32_groups]
        self._masters = None
        return {id(m) for group in self.fp32_from_fp16_groups for m in group}

    def pairs(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for half, masters in zip(self.fp16_groups, self.fp32_from_fp16_groups):
            yield from zip(half, masters)

    def master_of(self, param: torch.Tensor) -> torch.Tensor:
        """The fp32 master of a half model parameter (an fp32 parameter is its own)."""
        if self._masters is None:
            self._masters = {id(half): master for half, master in self.pairs()}
        return self._masters.get(id(param), param)

    @property
    def loss_scale(self) -> float:
        return self.loss_scaler.loss_scale if self.scale_loss else 1.0

    # ----- gradients
    def update_master_grads(self) -> None:
        """Half gradients → fp32 master gradients (unscaled), and the world's overflow decision; once per step."""
        if self._grads_ready:
            return
        inv = 1.0 / self.loss_scale
        for half, master in self.pairs():
            if half.grad is None:
                master.grad = None
                continue
            grad = half.grad.detach().float()
            master.grad = grad.mul_(inv) if inv != 1.0 else grad
        if inv != 1.0:
            for group in self.fp32_from_fp32_groups:
                for p in group:
                    if p.grad is not None:
                        p.grad.mul_(inv)
        self.overflow = self._any_rank_overflowed()
        self._grads_ready = True

    def _any_rank_overflowed(self) -> bool:
        local = any(not bool(torch.isfinite(_local(p.grad)).all()) for p in self.master_params() if p.grad is not None)
        flag = torch.tensor([1.0 if local else 0.0], device=state.device)
        if dist.is_initialized() and dist.get_world_size() > 1:  # a shard's inf must stop every rank
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        return bool(flag.item())

    def master_params(self) -> Iterator[torch.Tensor]:
        for masters, full in zip(self.fp32_from_fp16_groups, self.fp32_from_fp32_groups):
            yield from masters
            yield from full

    def clip_master_grads(self, max_norm: float, norm_type: float = 2.0) -> float:
        """Clip the fp32 master gradients to a total norm of max_norm over the whole model (every tensor-parallel
        shard and pipeline stage); return that norm, or -1 when this step overflowed (as SMP)."""
        self.update_master_grads()
        if self.overflow:
            return -1
        grads = [p.grad for p in self.master_params() if p.grad is not None]
        if self.model.sharded_data_parallel:  # every gradient a DTensor shard of one FSDP mesh: torch's own norm
            norm = torch.nn.utils.get_total_norm(grads, float(norm_type))
            total = float(norm.full_tensor() if hasattr(norm, "full_tensor") else norm)
        else:
            total = self._total_norm(float(norm_type))
        coeff = float(max_norm) / (total + 1.0e-6)
        if coeff < 1.0:
            for g in grads:
                _local(g).mul_(coeff)
        return total

    def _total_norm(self, norm_type: float) -> float:
        """Sharded gradients are summed over the tp group; replicated ones counted once; pipeline stages summed,
        a tied parameter held by several stages counted once (weighted by 1/holders)."""
        inf = norm_type == float("inf")
        weights = self._tied_weights()
        replicated = torch.zeros((), dtype=torch.float64, device=state.device)
        sharded = torch.zeros((), dtype=torch.float64, device=state.device)
        for p in self.master_params():
            if p.grad is None:
                continue
            g = _local(p.grad).detach().double()
            part = g.abs().max() if inf else g.norm(norm_type) ** norm_type
            part = part * weights.get(id(p), 1.0) if not inf else part
            if _is_sharded(p.grad):
                sharded = torch.maximum(sharded, part) if inf else sharded + part
            else:
                replicated = torch.maximum(replicated, part) if inf else replicated + part
        op = dist.ReduceOp.MAX if inf else dist.ReduceOp.SUM
        if len(state.layout.groups["tp"]) > 1:
            dist.all_reduce(sharded, op=op, group=state.groups["tp"])
        total = torch.maximum(sharded, replicated) if inf else sharded + replicated
        if len(state.layout.groups["pp"]) > 1:
            dist.all_reduce(total, op=op, group=state.groups["pp"])
        return float(total) if inf else float(total) ** (1.0 / norm_type)

    def _tied_weights(self) -> dict[int, float]:
        """1/holders for the masters of parameters tied across pipeline stages (GPT-2's wte and lm_head)."""
        if self._weights is not None:
            return self._weights
        self._weights = {}
        builder = getattr(getattr(self.model, "stage_plan", None), "builder", None)
        if self.model.pipeline is not None and builder is not None and getattr(builder, "tied", None):
            own = dict(builder.root.named_parameters(remove_duplicate=False))
            for names in builder.tied:
                held = next((own[n] for n in names if n in own), None)
                holders = torch.tensor([1.0 if held is not None else 0.0], device=state.device)
                dist.all_reduce(holders, group=state.groups["pp"])
                if held is not None:
                    self._weights[id(self.master_of(held))] = 1.0 / float(holders.item())
        return self._weights

    # ----- the step
    def step(self, inner_step: Callable[[], Any]) -> Any:
        """inner_step() steps the fp32 masters (the wrapped or the ZeRO optimizer); skipped on overflow."""
        self.update_master_grads()
        self.loss_scaler.update_scale(self.overflow)
        if self.overflow:
            self._grads_ready = False
            return None
        clip = state.cfg.sdp_gradient_clipping
        if self.model.sharded_data_parallel and clip > 0:  # SMP's clipping, on the unscaled gradients
            self.clip_master_grads(clip)
        self._grads_ready = False
        result = inner_step()
        self.master_params_to_model_params()
        return result

    def master_params_to_model_params(self) -> None:
        with torch.no_grad():
            for half, master in self.pairs():
                _local(half).copy_(_local(master))

    def model_params_to_master_params(self) -> None:
        """After the model's half parameters were loaded (SMP's reload_model_params)."""
        with torch.no_grad():
            for half, master in self.pairs():
                _local(master).copy_(_local(half))

    def zero_grad(self, set_to_none: bool = True) -> None:
        for half, _ in self.pairs():
            if set_to_none:
                half.grad = None
            elif half.grad is not None:
                half.grad.zero_()
        self._grads_ready = False

    # ----- checkpoints: the masters and the scaler travel with the optimizer's state
    def state_dict(self) -> dict[str, Any]:
        return {"fp32_from_fp16": [[_local(m).detach().cpu().clone() for m in g] for g in self.fp32_from_fp16_groups],
                "loss_scaler": self.loss_scaler.state_dict(), "overflow": self.overflow}

    def load_state_dict(self, sd: dict[str, Any]) -> None:
        with torch.no_grad():
            for masters, saved in zip(self.fp32_from_fp16_groups, sd["fp32_from_fp16"]):
                for m, s in zip(masters, saved):
                    _local(m).copy_(s)
        self.loss_scaler.load_state_dict(sd["loss_scaler"])
        self.overflow = sd.get("overflow", False)
        self.master_params_to_model_params()
