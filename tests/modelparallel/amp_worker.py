"""Runs under torchrun (1 or 2 ranks): SMP's fp16/bf16 training of a tiny GPT-2 (2 layers, hidden 32) beside a
plain PyTorch AMP reference in the same process (torch.autocast + GradScaler, fp32 weights, the whole global
batch); writes each rank's losses, norms, loss scales, dtypes and shard shapes as JSON.

Run by area_worker.py, which calls rank_results(cases, out_dir) in a launch shared with the other workers.
"""

from __future__ import annotations

import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import sagelaunch.modelparallel as smp  # noqa: E402
from models import _causal_lm, global_batch, lm_loss, shard  # noqa: E402
from mp_worker import lm_step as train_step  # noqa: E402  (the area's causal-LM step: loss, model.backward)

BATCH, LR, CLIP = 8, 1e-2, 1.0
INIT_SCALE = 2.0**16  # torch's GradScaler default, given to SMP's dynamic scaler (whose own default is 2**32)
SHARDED_NAME = "transformer.h.0.attn.c_attn.weight"


def build_model():
    return _causal_lm("GPT2Config", "GPT2LMHeadModel", 0, n_positions=8, n_embd=32, n_layer=2, n_head=2,
                      bos_token_id=0, eos_token_id=0, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)


@smp.step
def train_step_optimizer_backward(model, optimizer, x):
    loss = lm_loss(model(x).logits, x)
    optimizer.backward(loss)  # apex/SMP's FP16_Optimizer spelling
    return loss


def _inject_inf(params) -> None:
    """An overflow in one gradient: what a too-large loss scale produces in fp16."""
    grad = next(p.grad for p in params if p.grad is not None)
    local = grad.to_local() if hasattr(grad, "to_local") else grad
    local.view(-1)[0] = float("inf")


def reference(dtype: torch.dtype, steps: int, overflow_step: int | None, static_scale: float | None) -> dict:
    """Plain PyTorch AMP: fp32 weights (starting from the half-rounded ones SMP trains), autocast to `dtype`,
    GradScaler for fp16 (unscale_, clip, step, update), none for bf16."""
    model = build_model()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.to(dtype).float())
    opt = torch.optim.AdamW(model.parameters(), lr=LR)
    fp16 = dtype == torch.float16
    scaler = torch.amp.GradScaler("cpu", init_scale=static_scale or INIT_SCALE, enabled=fp16,
                                  growth_interval=10**6 if static_scale else 2000)
    out = {"losses": [], "norms": [], "scales": []}
    for step in range(steps):
        x = global_batch("gpt2", step, BATCH)["x"]
        opt.zero_grad()
        with torch.autocast("cpu", dtype=dtype):
            logits = model(x).logits
        loss = lm_loss(logits.float(), x)
        scaler.scale(loss).backward()
        if step == overflow_step:
            _inject_inf(model.parameters())
        scaler.unscale_(opt)
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP)
        scaler.step(opt)
        scaler.update()
        out["losses"].append(loss.item())
        out["norms"].append(norm.item())
        out["scales"].append(scaler.get_scale() if fp16 else 1.0)
    return out


def grad_scaler(case: dict) -> dict:
    """smp.amp.GradScaler on an fp32 DistributedModel (as transformers' Trainer uses it): an inf in rank 1's
    gradients after DDP's all-reduce must make both ranks skip and back off, or the replicas would diverge."""
    smp.init({"ddp": True})
    dmodel = smp.DistributedModel(build_model())
    opt = smp.DistributedOptimizer(torch.optim.AdamW(dmodel.parameters(), lr=LR))
    scaler = smp.amp.GradScaler(init_scale=INIT_SCALE)

    @smp.step
    def scaled_step(model, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits = model(x).logits
        loss = lm_loss(logits.float(), x)
        model.backward(scaler.scale(loss))
        return loss

    scales = []
    for step in range(case["steps"]):
        opt.zero_grad()
        scaled_step(dmodel, shard(global_batch("gpt2", step, BATCH), smp.dp_rank(), smp.dp_size())["x"])
        if step == case["overflow_step"] and smp.rank() == 1:
            _inject_inf(dmodel.parameters())
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    flat = torch.cat([p.detach().reshape(-1) for p in dmodel.parameters()])
    rank0 = flat.clone()
    dist.broadcast(rank0, src=0)
    return {"scales": scales, "max_diff_to_rank0": (flat - rank0).abs().max().item()}


def run(case: dict, out_dir: str) -> dict:
    """Train case["steps"] steps; or, with "checkpoint_at": n, train n steps and save a partial checkpoint, then
    start afresh (new model and optimizer), resume from it and train the remaining steps."""
    if case.get("grad_scaler"):
        return grad_scaler(case)
    at = case.get("checkpoint_at")
    if at is None:
        out = train(case, range(case["steps"]))
        out["reference"] = reference(torch.float16 if case["precision"] == "fp16" else torch.bfloat16,
                                     case["steps"], case.get("overflow_step"), case.get("static_loss_scale"))
        return out
    folder = os.path.join(out_dir, f"checkpoint_{case['name']}")
    first = train(case, range(at), save_to=folder)
    second = train(case, range(at, case["steps"]), resume_from=folder)
    return {**second, "losses": first["losses"] + second["losses"], "scales": first["scales"] + second["scales"]}


def train(case: dict, steps: range, save_to: str | None = None, resume_from: str | None = None) -> dict:
    config, precision = case["config"], case["precision"]
    smp.init({"ddp": True, precision: True, **config})
    with smp.model_creation(tensor_parallelism=smp.tp_size() > 1):
        model = build_model()
    dmodel = smp.DistributedModel(model)
    static = case.get("static_loss_scale")
    opt = smp.DistributedOptimizer(
        torch.optim.AdamW(dmodel.parameters(), lr=LR), static_loss_scale=static, dynamic_loss_scale=static is None,
        dynamic_loss_args={"init_scale": INIT_SCALE, "scale_window": 2000})
    overflow_step, overflow_rank = case.get("overflow_step"), case.get("overflow_rank", 0)
    out = {"losses": [], "norms": [], "scales": [], "overflow": [], "unchanged_on_overflow": None,
           "param_dtypes": sorted({str(p.dtype) for p in dmodel.parameters()}),
           "master_dtypes": sorted({str(p.dtype) for g in opt.fp32_from_fp16_groups for p in g}),
           "inner_is_fp32": all(p.dtype == torch.float32 for g in opt.optimizer.param_groups for p in g["params"])}
    computed = set()  # the dtype this rank's attention projections compute in
    for name, module in dmodel.module.named_modules():
        if name.endswith("attn.c_attn"):
            module.register_forward_hook(lambda m, args, output: computed.add(str(output.dtype)))
    held = dict(dmodel.module.named_parameters()).get(SHARDED_NAME)  # a pipeline stage may not hold it
    out["sharded_shape"] = list(_full(held).shape) if held is not None else None
    if resume_from:
        smp.resume_from_checkpoint(resume_from, tag="checkpoint", partial=True)
    for step in steps:
        x = shard(global_batch("gpt2", step, BATCH), smp.dp_rank(), smp.dp_size())["x"]
        opt.zero_grad()
        output = (train_step_optimizer_backward(dmodel, opt, x) if case.get("optimizer_backward")
                  else train_step(dmodel, x))
        loss = output.reduce_mean().detach()
        dist.all_reduce(loss, group=smp.get_dp_process_group())
        if step == overflow_step and smp.rank() == overflow_rank:
            _inject_inf(dmodel.parameters())
        before = [m.detach().clone() for g in opt.fp32_from_fp16_groups for m in g]
        out["norms"].append(float(opt.clip_master_grads(CLIP)))
        opt.step()
        if step == overflow_step:
            after = [m.detach() for g in opt.fp32_from_fp16_groups for m in g]
            out["unchanged_on_overflow"] = all(torch.equal(_full(a), _full(b)) for a, b in zip(before, after))
        out["losses"].append(loss.item() / smp.dp_size())
        out["scales"].append(opt.loss_scale)
        out["overflow"].append(bool(opt.overflow))
    out["compute_dtypes"] = sorted(computed)
    if save_to:
        smp.save_checkpoint(save_to, tag="checkpoint", partial=True, model=dmodel, optimizer=opt)
    return out


def _full(t):
    return t.to_local() if hasattr(t, "to_local") else t


def rank_results(cases: list[dict], out_dir: str) -> dict:
    results = {}
    for case in cases:
        try:
            results[case["name"]] = run(case, out_dir)
        except Exception as err:  # the test names the failing case with its traceback
            results[case["name"]] = {"error": f"{type(err).__name__}: {err}", "traceback": traceback.format_exc()}
    return results
