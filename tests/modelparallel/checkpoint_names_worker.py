"""Runs under torchrun (2 ranks, pp=2): partial checkpoints under both of SMP's file namings — the older releases'
f"{name}_{mp_rank}" (the BERT example removes its old checkpoints by that name) and f"{name}_{pp_rank}_{tp_rank}" —
written, listed, read back under either naming and removed as the scripts do; writes each rank's findings as JSON.

Run by area_worker.py, which calls rank_results(cases, out_dir) in a launch shared with the other workers.
"""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import torch  # noqa: E402

import sagelaunch.modelparallel as smp  # noqa: E402
from sagelaunch.jobspec.contract import SAGELAUNCH_SMP_CHECKPOINT_NAMES as NAMES  # noqa: E402


def rank_results(cases: list[dict], out_dir: str) -> dict:
    folder = os.path.join(out_dir, "checkpoints")
    os.makedirs(folder, exist_ok=True)
    smp.init({"pipeline_parallel_degree": 2, "microbatches": 2, "ddp": True})
    torch.manual_seed(0)
    model = smp.DistributedModel(torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)))
    model.partition()
    own = {k: v.tolist() for k, v in model.local_state_dict().items() if isinstance(v, torch.Tensor)}
    result: dict = {"mp_rank": smp.mp_rank(), "own": own}

    def listing() -> list[str]:
        smp.barrier()  # every rank's file operations so far are done
        names = sorted(os.listdir(folder))
        smp.barrier()  # and none starts the next before every rank has looked
        return names

    def read(path: str) -> dict:
        return {k: v.tolist() for k, v in smp.load(path, partial=True)["model"].items() if isinstance(v, torch.Tensor)}

    old = os.path.join(folder, "ckpt_1.pt")
    os.environ[NAMES] = "mp_rank"  # a job whose framework version ships an SMP release before tensor parallelism
    smp.save({"model": model.local_state_dict()}, old, partial=True)
    result["old_names"] = listing()
    result["old_read"] = read(old)
    os.environ[NAMES] = "pp_tp"
    result["old_read_by_new"] = read(old)
    os.remove(old + f"_{smp.mp_rank()}")  # the BERT example's rotation
    result["after_removal"] = listing()

    new = os.path.join(folder, "ckpt_2.pt")
    smp.save({"model": model.local_state_dict()}, new, partial=True)
    result["new_names"] = listing()
    os.environ[NAMES] = "mp_rank"
    result["new_read_by_old"] = read(new)
    return result
