"""Runs under torchrun (1 or 2 ranks): `model.module.module` is the user's model (SMP v1: `model.module` is the
data-parallel wrapper), transformers' unwrap_model ends there, and the names of parameters and state dicts are those
of before. Writes each rank's findings as JSON.

Run by area_worker.py, which calls rank_results(cases, out_dir) in a launch shared with the other workers.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

import sagelaunch.modelparallel as smp  # noqa: E402
from models import build_gpt2  # noqa: E402


@smp.step
def train_step(model, input_ids):
    loss = model(input_ids=input_ids, labels=input_ids).loss
    model.backward(loss)
    return loss


def unwrap(model, **kwargs):
    """transformers' own unwrap_model loop (`while hasattr(model, "module")`, taken without accelerate) and
    accelerate's, as transformers 5.x calls them."""
    import transformers.modeling_utils as mu

    real = mu.is_accelerate_available
    mu.is_accelerate_available = lambda: False
    try:
        own = mu.unwrap_model(model, **kwargs)
    finally:
        mu.is_accelerate_available = real
    return own, mu.unwrap_model(model, recursive=True)


def run(world: int) -> dict:
    smp.init({"ddp": True, "tensor_parallel_degree": world} if world > 1 else {"ddp": True})
    with smp.model_creation(tensor_parallelism=world > 1):  # tp=2: the GPT-2 blocks really shard
        user = build_gpt2(0)
    names_before = [n for n, _ in user.named_parameters()]
    keys_before = list(user.state_dict().keys())
    model = smp.DistributedModel(user)
    own, recursive = unwrap(model)
    out = {
        "tp_sharded": len([n for n, d in model.tp_shard_dims.items() if d is not None]),
        "module_module_is_user": model.module.module is user,
        "get_module_is_user": model.get_module() is user,
        "view_is_stable": model.module is model.module,
        "view_isinstance": isinstance(model.module, type(user)) and isinstance(model.module, torch.nn.Module),
        "config_n_embd": model.module.module.config.n_embd,
        "config_through_view": model.module.config is user.config,
        "unwrap_own_is_user": own is user,
        "unwrap_recursive_is_user": recursive is user,
        "named_parameters": [n for n, _ in model.named_parameters()],
        "expected_named_parameters": ["module." + n for n in names_before],
        "view_named_parameters": [n for n, _ in model.module.named_parameters()],
        "user_named_parameters": [n for n, _ in user.named_parameters()],
        "state_dict_keys": list(model.state_dict().keys()),
        "expected_state_dict_keys": keys_before,
        "module_state_dict_keys": list(model.module.module.state_dict().keys()),
    }
    model.module.smp_marker = 7  # writes go to the user's model
    out["write_through"] = getattr(user, "smp_marker", None) == 7
    loss = train_step(model, torch.randint(0, 32, (2, 8)))
    out["trained"] = bool(torch.isfinite(loss.reduce_mean()).item())
    return out


def rank_results(cases: list[dict], out_dir: str) -> dict:
    return run(dist.get_world_size())
