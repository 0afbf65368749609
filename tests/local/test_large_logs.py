"""Logs of any size cost bounded memory: the supervisor's pumps, `jobs logs`, `fit`'s live view; one stored copy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import tracemalloc
from pathlib import Path

import pytest

from sagelaunch.launcher.local import registry
from sagelaunch.launcher.local.logs import MAX_LINE_BYTES, LogFollower, LogRouter, rank_lines, tail_lines
from tests.local.conftest import make_spec

REPO = Path(__file__).resolve().parents[2]
MB = 2**20


def _peak_python_bytes(work) -> int:
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_20_mb_line_without_newline_is_pumped_in_pieces_with_bounded_memory(tmp_path):
    router = LogRouter(tmp_path / "logs")
    read_end, write_end = os.pipe()
    chunk = ("é" * MB).encode()  # 2-byte characters: pieces are cut inside characters too

    def feed() -> None:  # a 20 MB line
        with open(write_end, "wb") as pipe:
            pipe.write(b"[algo-1 rank3] before\n[algo-1 rank3] ")
            for _ in range(10):
                pipe.write(chunk)
            pipe.write(b"\ntorchrun's own line\n")

    writer = threading.Thread(target=feed)
    writer.start()
    peak = _peak_python_bytes(lambda: router.pump("algo-1", open(read_end, "rb"), stream="stdout"))
    writer.join()
    router.close()
    assert peak < 8 * MAX_LINE_BYTES, f"{peak / MB:.1f} MB held while pumping a 20 MB line"
    lines = (tmp_path / "logs" / "job.log").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "[algo-1 rank3] before" and lines[-1] == "[algo-1] torchrun's own line"
    pieces = lines[1:-1]
    assert len(pieces) >= 20 * MB // MAX_LINE_BYTES  # split, each piece keeps the rank's prefix
    assert all(p.startswith("[algo-1 rank3] ") for p in pieces)
    assert "".join(p[len("[algo-1 rank3] "):] for p in pieces) == "é" * (10 * MB)  # none lost or mangled
    assert list(router.stderr_tails) == []  # stdout: nothing kept for failure reasons


def test_reading_a_50_mb_log_holds_a_bounded_amount(tmp_path):
    log = tmp_path / "job.log"
    with open(log, "w") as handle:
        for start in range(0, 500_000, 10_000):
            handle.write("".join(f"[algo-1 rank{i % 2}] line {i:07d} " + "x" * 70 + "\n"
                                 for i in range(start, start + 10_000)))
    assert log.stat().st_size > 45 * MB
    counted = {"lines": 0}

    def read_all() -> None:
        for _ in LogFollower(log).read(final=True):
            counted["lines"] += 1

    peak = _peak_python_bytes(read_all)
    assert counted["lines"] == 500_000
    assert peak < 8 * MB, f"{peak / MB:.1f} MB held while reading a 50 MB log"
    assert tail_lines(log, 2) == [f"[algo-1 rank{i % 2}] line {i:07d} " + "x" * 70 for i in (499_998, 499_999)]
    assert next(rank_lines(log, "algo-1", 1)) == "line 0000001 " + "x" * 70


def _measured(code: str, stdout: Path, *args: str) -> dict:
    """Run `code` in a fresh Python with stdout to a file; it reports its own peak RSS on stderr."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    report = ("\nimport json, resource, sys\nsys.stdout.flush()\n"
              "print(json.dumps({'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), file=sys.stderr)")
    with open(stdout, "w") as out:
        done = subprocess.run([sys.executable, "-c", code + report, *args], env=env, cwd=REPO, stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stderr.strip().splitlines()[-1])


FIT = """
import sys
from pathlib import Path
from sagelaunch.launcher.backends import submit
from sagelaunch.jobspec.spec import TrainingJobSpec
submit(TrainingJobSpec.model_validate_json(Path(sys.argv[1]).read_text()), wait=True, logs=True)
"""
LOGS = """
import sys
from sagelaunch.cli import main
sys.argv = ["sagelaunch", "jobs", "logs", sys.argv[1]]
try:
    main()
except SystemExit as end:
    assert not end.code, end.code
"""


@pytest.mark.slow
def test_fit_following_and_jobs_logs_of_a_50_mb_log_use_memory_independent_of_its_size(tmp_path):
    """A job prints 50 MB (and one 4 MB line without newline); the waiting `fit` and `jobs logs` peak at about
    the RSS they have for a 10-line job, and the log is stored once."""
    runs = {}
    for size, lines, long_line in (("small", 10, 0), ("large", 500_000, 4 * MB)):
        spec = make_spec("chatty.py", hyperparameters={"lines": lines, "line_bytes": 100, "long_line_bytes": long_line})
        spec_file = tmp_path / f"{size}.json"
        spec_file.write_text(spec.model_dump_json())
        fit = _measured(FIT, tmp_path / f"{size}-fit.out", str(spec_file))
        logs = _measured(LOGS, tmp_path / f"{size}-logs.out", spec.job_name)
        runs[size] = {"fit": fit["rss_mb"], "logs": logs["rss_mb"], "job": spec.job_name}
    print(f"peak RSS in MB, 10-line vs 50 MB log: {runs}")  # README's measured figures
    large = runs["large"]
    job_dir = Path(registry.get(large["job"])["JobDir"])
    job_log = job_dir / "logs" / "job.log"
    assert job_log.stat().st_size > 50 * MB
    for reader in ("fit", "logs"):
        printed = (tmp_path / f"large-{reader}.out").read_text(encoding="utf-8").splitlines()
        ranks = [line for line in printed if line.startswith("[algo-1 rank0] ")]
        # every character arrives (torchrun may cut a line it reads while it is being written: count characters)
        assert sum(line.count("é") for line in ranks) == 500_000 and sum(line.count("L") for line in ranks) == 4 * MB
        assert max(map(len, ranks)) <= MAX_LINE_BYTES + 20  # the long line came in pieces
        grown = large[reader] - runs["small"][reader]
        assert grown < 25, f"{reader}: {large[reader]:.0f} MB RSS for a 50 MB log, {runs['small'][reader]:.0f} MB for 10 lines"
    stored = sum(p.stat().st_size for p in (job_dir / "logs").rglob("*") if p.is_file())
    assert stored < 1.1 * job_log.stat().st_size, "the log is stored more than once"
