"""smp.optimizers: SMP's optimizers. FusedLAMB is apex's FusedLAMB algorithm (LAMB with Adam moments, bias
correction, decoupled weight decay inside the trust ratio, and clipping by the global gradient norm); the fusion
is a CUDA detail, the update is the same."""

from __future__ import annotations

import torch

from sagelaunch.modelparallel.errors import SMPValidationError
from sagelaunch.modelparallel.pipeline.grad_norm import global_grad_norm


class FusedLAMB(torch.optim.Optimizer):
    def __init__(self, params, lr: float = 1e-3, bias_correction: bool = True, betas=(0.9, 0.999), eps: float = 1e-6,
                 weight_decay: float = 0.01, amsgrad: bool = False, adam_w_mode: bool = True,
                 grad_averaging: bool = True, set_grad_none: bool = True, max_grad_norm: float = 1.0,
                 use_nvlamb: bool = False):
        if amsgrad:
            raise SMPValidationError("FusedLAMB(amsgrad=True): not supported (nor by apex's FusedLAMB); fix: amsgrad=False",
                                     field="amsgrad", value=True, allowed="False", fix="amsgrad=False")
        defaults = dict(lr=lr, bias_correction=bias_correction, betas=betas, eps=eps, weight_decay=weight_decay,
                        grad_averaging=grad_averaging, max_grad_norm=max_grad_norm)
        super().__init__(params, defaults)
        self.adam_w_mode, self.use_nvlamb = adam_w_mode, use_nvlamb

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        # the whole model's norm (a pipeline's stages summed), computed on every rank even one without gradients
        global_norm = global_grad_norm(p for g in self.param_groups for p in g["params"])
        if not any(p.grad is not None for g in self.param_groups for p in g["params"]):
            return loss
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            max_norm = group["max_grad_norm"]
            clip = max(global_norm.item() / max_norm, 1.0) if max_norm and max_norm > 0 else 1.0
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = p.grad.float() / clip
                st = self.state[p]
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = torch.zeros_like(p, dtype=torch.float32)
                    st["exp_avg_sq"] = torch.zeros_like(p, dtype=torch.float32)
                st["step"] += 1
                m, v = st["exp_avg"], st["exp_avg_sq"]
                if not self.adam_w_mode and group["weight_decay"]:
                    grad = grad + group["weight_decay"] * p.float()
                m.mul_(beta1).add_(grad, alpha=1 - beta1 if group["grad_averaging"] else 1.0)
                v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                m_hat, v_hat = m, v
                if group["bias_correction"]:
                    m_hat, v_hat = m / (1 - beta1 ** st["step"]), v / (1 - beta2 ** st["step"])
                update = m_hat / (v_hat.sqrt() + group["eps"])
                if self.adam_w_mode and group["weight_decay"]:
                    update = update + group["weight_decay"] * p.float()
                ratio = 1.0
                if self.use_nvlamb or group["weight_decay"]:  # apex: the trust ratio where weight decay applies
                    w_norm, u_norm = torch.linalg.vector_norm(p.float()), torch.linalg.vector_norm(update)
                    if w_norm > 0 and u_norm > 0:
                        ratio = (w_norm / u_norm).item()
                p.add_((update * (-group["lr"] * ratio)).to(p.dtype))
        return loss
