"""What the workers that compare a pipelined run with one process share (hf_labels_worker.py, tree_worker.py): each
case pipelined on every rank and, on rank 0, trained in one process."""

from __future__ import annotations

from typing import Callable

import torch.distributed as dist


def against_one_process(pipelined: Callable[[dict], dict],
                        one_process: Callable[[str], dict]) -> Callable[[list[dict], str], dict]:
    """A worker's rank_results: {case name: this rank's pipelined run, case name + "_one_process": rank 0's
    single-process run of the same model}."""
    def rank_results(cases: list[dict], out_dir: str) -> dict:
        results = {}
        for case in cases:
            results[case["name"]] = pipelined(case)
            if dist.get_rank() == 0 and "error" not in results[case["name"]]:
                results[case["name"] + "_one_process"] = one_process(case["model"])
        return results

    return rank_results
