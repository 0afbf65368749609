"""A folder of many ranks is analysed in worker processes; the result equals the one-process analysis."""

from __future__ import annotations

import gzip
import json
import shutil

from sagelaunch.profiler.analysis import parallel
from sagelaunch.profiler.loader import load_profile
from tests.profiler.conftest import TRACES, analysis_json


def _rank_copy(src: str, dest, rank: int) -> None:
    doc = json.loads(gzip.decompress((TRACES / src).read_bytes()))
    doc["distributedInfo"] = {**(doc.get("distributedInfo") or {}), "rank": rank, "world_size": 6}
    dest.write_bytes(gzip.compress(json.dumps(doc).encode(), 1))


def test_many_ranks_in_processes_equal_one_process(tmp_path):
    for r in range(4):
        _rank_copy(f"sampled_rank{r % 2}.pt.trace.json.gz", tmp_path / f"r{r}.pt.trace.json.gz", r)
    _rank_copy("sampled_rank0.pt.trace.json.gz", tmp_path / "r4-again.pt.trace.json.gz", 2)  # rank 2 twice
    shutil.copy(TRACES / "alexnet.pt.trace.json.gz", tmp_path / "r5.pt.trace.json.gz")  # its own step names
    (tmp_path / "broken.pt.trace.json.gz").write_bytes(b"\x1f\x8bnot gzip")
    (tmp_path / "hyperparameters.json").write_text('{"lr": 1}')
    assert parallel.worth_it(tmp_path)
    together = analysis_json(tmp_path)
    alone = analysis_json(load_profile(tmp_path))  # a Profile: the one-process path
    assert together == alone
    assert sorted(together["ranks"], key=int) == ["0", "1", "2", "3", "4", "5"]
    assert any("both say rank" in w for w in together["warnings"])
    assert any("broken.pt.trace.json.gz" in w for w in together["warnings"])
