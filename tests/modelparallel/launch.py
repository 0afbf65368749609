"""Start one torchrun launch of mp_worker.py for a list of cases and read every rank's JSON results."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from sagelaunch.jobspec.net import free_port  

WORKER = Path(__file__).with_name("mp_worker.py")
REPO = Path(__file__).resolve().parents[2]


def first_failure(output: str, lines: int = 60) -> str:
    """The first traceback the ranks printed: the root cause, which the other ranks' timeouts and torchrun's summary
    that follow it would push out of a tail."""
    start = output.find("Traceback (most recent call last)")
    if start < 0:
        return "(no traceback in the output)"
    line_start = output.rfind("\n", 0, start) + 1
    return "\n".join(output[line_start:].splitlines()[:lines])


def start_cases(cases: list[dict], world: int, out_dir: Path, timeout: float = 240, worker: Path = WORKER):
    """Start the launch now; the returned function waits for it and reads the ranks' results."""
    out_dir.mkdir(parents=True, exist_ok=True)
    cases_file = out_dir / "cases.json"
    cases_file.write_text(json.dumps(cases))
    env = {**os.environ, "SMP_TIMEOUT_SECONDS": "60", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(world),
           "--master-addr", "127.0.0.1", "--master-port", str(free_port()), str(worker), str(cases_file), str(out_dir)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    deadline = time.monotonic() + timeout

    def wait() -> list[dict]:
        try:
            output, _ = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)  # torchrun and its workers: the session this launch started
            output, _ = proc.communicate()
            raise AssertionError(f"torchrun with {world} ranks did not finish in {timeout}s:\n"
                                 f"{first_failure(output)}\n…\n{output[-3000:]}")
        if proc.returncode != 0:
            raise AssertionError(f"torchrun with {world} ranks failed ({proc.returncode}):\n"
                                 f"{first_failure(output)}\n…\n{output[-3000:]}")
        return [json.loads((out_dir / f"rank{r}.json").read_text()) for r in range(world)]

    def stop() -> None:
        """End a launch nobody waited for (only some tests of the area were selected)."""
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.communicate()

    wait.stop = stop
    return wait


def run_cases(cases: list[dict], world: int, out_dir: Path, timeout: float = 240, worker: Path = WORKER) -> list[dict]:
    return start_cases(cases, world, out_dir, timeout, worker)()


@contextlib.contextmanager
def launched_worlds(tmp_path_factory, prefix: str, worlds: dict[int, list[dict]], **options):
    """One torchrun launch per world size, all started together (their ranks wait on each other's collectives);
    yields {size: wait} and stops every launch at the end."""
    waits = {size: start_cases(world_cases, size, tmp_path_factory.mktemp(f"{prefix}{size}"), **options)
             for size, world_cases in worlds.items()}
    try:
        yield waits
    finally:
        for wait in waits.values():
            wait.stop()
