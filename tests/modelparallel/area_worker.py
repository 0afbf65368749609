"""Runs under torchrun: every group of cases the area's tests need at this world size, one group after another in
the same processes, so torch, transformers and the process group start once per world size (tests/modelparallel/
area.py). A group names its worker module (mp_worker, tree_worker, …), whose rank_results(cases, out_dir) gives this
rank's results; they are written as out_dir/<group>/rank<r>.json as soon as the group ends, so a test waits only
for the groups before its own.

usage: python -m torch.distributed.run --nproc-per-node N area_worker.py groups.json out_dir
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import torch.distributed as dist  # noqa: E402

import sagelaunch.modelparallel as smp  # noqa: E402

GROUP_ERROR = "group_error"  # the key of a group whose worker raised on this rank (area.py reports its traceback)


def run_group(group: dict, out_dir: str) -> dict:
    """One group's results on this rank; what a worker sets in os.environ stays within its group."""
    environ = dict(os.environ)
    try:
        return importlib.import_module(group["worker"]).rank_results(group["cases"], out_dir)
    except Exception as err:
        return {GROUP_ERROR: f"{type(err).__name__}: {err}", "traceback": traceback.format_exc()[-4000:]}
    finally:
        os.environ.clear()
        os.environ.update(environ)


def main() -> None:
    with open(sys.argv[1]) as fd:
        groups = json.load(fd)
    smp.init({"ddp": True})  # the process group, for the barriers between groups (each case calls smp.init again)
    for group in groups:
        out_dir = os.path.join(sys.argv[2], group["key"])
        os.makedirs(out_dir, exist_ok=True)
        results = run_group(group, out_dir)
        path = os.path.join(out_dir, f"rank{dist.get_rank()}.json")
        with open(path + ".part", "w") as fd:
            json.dump(results, fd)
        os.replace(path + ".part", path)  # a reader never sees half a file
        dist.barrier()  # the next group starts together on every rank
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
