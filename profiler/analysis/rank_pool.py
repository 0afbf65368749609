"""The worker processes of a many-rank analysis (profiler/analysis/parallel.py), in a module of their own: the
process pool's modules (concurrent.futures.process, multiprocessing: ~0.03 s) load only when a folder has enough
ranks to use them, never for one trace."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor


def fork_pool(workers: int) -> ProcessPoolExecutor:
    """`workers` processes started by fork: they inherit the imported modules, so no second start-up."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("fork"))
