"""One rank's trace files of several profiling cycles (torch.profiler's tensorboard_trace_handler writes one per
cycle) read as cycles of that rank, never as extra ranks: real torch.profiler runs, one process and two under
torchrun (gloo, each rank's number in its traces' distributedInfo)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sagelaunch.profiler.analysis import analyze
from tests.profiler.conftest import script_env

SCRIPT = '''
import os, sys, torch
from torch import nn
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
torch.manual_seed(0); torch.set_num_threads(1)
if "RANK" in os.environ:
    import torch.distributed as dist
    dist.init_process_group("gloo")
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x, y = torch.randn(32, 64), torch.randn(32, 1)
with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=1, warmup=1, active=5, repeat=2),
             on_trace_ready=tensorboard_trace_handler(sys.argv[1])) as p:
    for _ in range(16):
        opt.zero_grad(); nn.functional.mse_loss(model(x), y).backward(); opt.step(); p.step()
'''


def _run(tmp_path, ranks: int):
    script, out = tmp_path / "loop.py", tmp_path / "traces"
    script.write_text(SCRIPT)
    cmd = [sys.executable, str(script), str(out)]
    if ranks > 1:
        cmd[1:1] = ["-m", "torch.distributed.run", "--nproc-per-node", str(ranks), "--master-port", "29647"]
    subprocess.run(cmd, check=True, env=script_env({"OMP_NUM_THREADS": "1"}), cwd=tmp_path, capture_output=True,
                   timeout=180)
    files = sorted(out.glob("*.pt.trace.json*"))
    assert len(files) == 2 * ranks  # one file per rank and cycle
    return analyze(out)


@pytest.mark.slow
def test_two_cycles_of_one_process_are_one_rank(tmp_path):
    a = _run(tmp_path, 1)
    assert list(a.ranks) == ["0"] and not any("disagree" in w for w in a.warnings)
    loop = a.ranks["0"].loop
    assert loop is not None and loop.step == [2, 3, 4, 5, 6, 9, 10, 11, 12, 13]  # ProfilerStep#N of both cycles
    pause = loop.start_us[5] - loop.start_us[4]  # from the first cycle's last step to the second's first
    assert loop.cycle_us[4] < pause / 2  # the pause between the cycles is not that step's
    assert not [f for f in a.findings if f.rule in ("straggler_rank", "step_outlier")]


@pytest.mark.slow
def test_cycles_of_two_ranks_keep_their_ranks(tmp_path):
    a = _run(tmp_path, 2)
    assert list(a.ranks) == ["0", "1"] and not any("disagree" in w for w in a.warnings)
    for r in a.ranks.values():
        assert r.loop is not None and r.loop.count == 10 and len(r.source.split(", ")) == 2
