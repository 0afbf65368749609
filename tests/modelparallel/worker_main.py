"""The main of the torchrun workers that compare a pipelined run with one process (hf_labels_worker.py,
tree_worker.py): each case pipelined on every rank and, on rank 0, trained in one process; each rank's results
written as out_dir/rank{r}.json."""

from __future__ import annotations

import json
import os
import sys
from typing import Callable

import torch.distributed as dist


def main_against_one_process(pipelined: Callable[[dict], dict], one_process: Callable[[str], dict]) -> None:
    results = {}
    with open(sys.argv[1]) as fd:
        cases = json.load(fd)
    for case in cases:
        results[case["name"]] = pipelined(case)
        if dist.get_rank() == 0 and "error" not in results[case["name"]]:
            results[case["name"] + "_one_process"] = one_process(case["model"])
    with open(os.path.join(sys.argv[2], f"rank{dist.get_rank()}.json"), "w") as fd:
        json.dump(results, fd)
    dist.barrier()
