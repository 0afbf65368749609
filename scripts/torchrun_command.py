"""The torchrun command line that runs one worker script on `world` local ranks: the tests' one-launch-per-world
area (tests/modelparallel/launch.py) and the planner's measurement (planner_measure.py) both start theirs here."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from sagelaunch.jobspec.net import free_port

REPO = Path(__file__).resolve().parents[1]


def torchrun_command(worker: Path, args: list[str], world: int,
                     smp_timeout_s: int) -> tuple[list[str], dict[str, str]]:
    """The command and environment: a free rendezvous port on 127.0.0.1, one thread per rank (the ranks share the
    machine's cores), the repository on the path, and SMP's collective timeout (how long a rank waits for a peer)."""
    env = {**os.environ, "SMP_TIMEOUT_SECONDS": str(smp_timeout_s), "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", str(world), "--master-addr",
           "127.0.0.1", "--master-port", str(free_port()), str(worker), *args]
    return cmd, env
