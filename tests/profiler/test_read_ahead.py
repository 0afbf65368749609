"""`profile analyze`'s read-ahead (profiler/prefetch.py): a process forked before numpy is imported reads, gunzips
and decodes the trace into columns; the parent's RankTrace equals the one it would have read itself, errors come
out as the parent's own read words them, and the child is reaped."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TRACES = REPO / "tests" / "data" / "traces"

# In a fresh process (one thread, numpy not loaded): start the read-ahead, check that neither this process nor
# (a fork taken at that moment) the child has numpy, read through it, then compare with an ordinary read.
SCRIPT = """
import os, sys
from pathlib import Path
from sagelaunch.profiler import kineto_reader, prefetch
path, expected = Path(sys.argv[1]), sys.argv[2]
from sagelaunch.profiler import trace_chunks
# a fork with two idle cores, else a thread: both paths here, whatever the machine's load
trace_chunks.free_cores = lambda: 2 if expected == "_InChild" else 1
prefetch.start(path)
reading = kineto_reader._AHEAD.get(str(path.resolve()))
assert type(reading).__name__ == expected, f"expected {expected}, started {reading}"
child = getattr(reading, "child", None)
assert "numpy" not in sys.modules, "the reader imported numpy before forking"
from sagelaunch.profiler.kineto_reader import ProfileLoadError, read_kineto
try:
    ahead = read_kineto(path, cache=False)
except ProfileLoadError as exc:
    ahead = exc
try:
    if child is not None:
        os.waitpid(child.pid, os.WNOHANG)
        raise AssertionError("the read-ahead child was not reaped")
except ChildProcessError:
    pass
assert not kineto_reader._AHEAD, "the reading was not taken"
try:
    mine = read_kineto(path, cache=False)
except ProfileLoadError as exc:
    print("ERROR", str(ahead) == str(exc), type(ahead) is type(exc))
    sys.exit(0)
import numpy as np
assert ahead.names == mine.names and ahead.cats == mine.cats and ahead.dtypes == mine.dtypes
assert ahead.meta.to_dict() == mine.meta.to_dict()
assert ahead.columns.keys() == mine.columns.keys()
for k in mine.columns:
    assert ahead.columns[k].dtype == mine.columns[k].dtype, k
    assert np.array_equal(ahead.columns[k], mine.columns[k]), k
assert (ahead.source_order is None) == (mine.source_order is None)
print("SAME", len(mine))
"""


def _run(path: Path, expected: str = "_InChild") -> str:
    env = {**os.environ, "PYTHONPATH": str(REPO), "SAGELAUNCH_PROFILE_CACHE": "0"}
    cmd = [sys.executable, "-c", SCRIPT, str(path), expected]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_read_ahead_columns_equal_the_parents_own_read():
    for trace in ("v100_rank0.pt.trace.json.gz", "sampled_rank1.pt.trace.json.gz", "cpu_only.pt.trace.json.gz"):
        result = _run(TRACES / trace)
        assert result.startswith("SAME "), (trace, result)
    assert _run(TRACES / "sampled_rank1.pt.trace.json.gz", "_InThread").startswith("SAME ")


def test_read_ahead_errors_are_the_parents_own(tmp_path):
    truncated = tmp_path / "cut.json.gz"
    truncated.write_bytes((TRACES / "alexnet.pt.trace.json.gz").read_bytes()[:5000])
    not_json = tmp_path / "text.json"
    not_json.write_text('{"traceEvents": [{"ph": "X", "ts": 1, "dur": 2, "cat": "kernel", "name": "k"},')
    for bad in (truncated, not_json):
        for expected in ("_InChild", "_InThread"):
            result = _run(bad, expected)
            assert result == "ERROR True True", (bad.name, expected, result)
