""""CPU busy" counts operator time, not annotation spans: a real loop that sleeps in its steps (operators recorded)
reads as mostly idle, as the process's own CPU time says, where annotation spans would call it ~100% busy."""

from __future__ import annotations

import pytest

from sagelaunch.profiler.analysis import analyze
from tests.profiler.conftest import run_profiled_script

LOOP = '''
import json, sys, time
import torch
from torch import nn
import sagelaunch.profiler as smprof
torch.set_num_threads(1)
smprof.configure(smprof.Config(output_dir=sys.argv[1], record_cpu_ops=True, cpu_ops_steps=40, cpu_ops_every_steps=40))
model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 1))
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
x, y = torch.randn(64, 64), torch.randn(64, 1)
smprof.start_profiling()
wall, cpu = time.perf_counter(), time.process_time()
for i in range(1, 41):
    with smprof.annotate(f"step_{i}"):
        time.sleep(0.02)  # waits for its batch: the process is idle, the step annotation is open
        with smprof.annotate("Forward"):
            loss = nn.functional.mse_loss(model(x), y)
        with smprof.annotate("Backward"):
            loss.backward()
        with smprof.annotate("Optimizer"):
            opt.step()
            opt.zero_grad()
share = (time.process_time() - cpu) / (time.perf_counter() - wall)
smprof.stop_profiling()
print(json.dumps({"process_cpu_share": share}))
'''


@pytest.mark.slow
def test_cpu_busy_is_operator_time_and_agrees_with_the_process_cpu(tmp_path):
    _, out = run_profiled_script(LOOP, tmp_path / "profile", timeout=300)
    a = analyze(tmp_path / "profile")
    busy = next(f for f in a.figures if f.key == "cpu_busy_trace")
    cpu = a.ranks["0"].cpu
    share = cpu.active_us / cpu.span_us
    assert share < 0.5, busy.text  # annotation spans cover ~100% of this run
    assert abs(share - out["process_cpu_share"]) <= 0.15, (busy.text, out)
    assert any(f.rule == "unexplained_step" for f in a.findings)  # the 20 ms before Forward
