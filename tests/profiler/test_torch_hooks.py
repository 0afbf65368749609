"""A loop without a single annotation still has steps, input wait and memory: the profiler's torch hooks record every
optimizer.step(), every DataLoader batch and the process's memory, and leave torch as they found it at stop."""

from __future__ import annotations

import pytest

from tests.profiler.conftest import analysis_json, run_profiled_script

LOOP = """
import json, sys, time
import torch
from torch.utils.data import DataLoader, Dataset
from torch.utils.data import dataloader as dl
from torch.optim import optimizer as optimizer_module
import sagelaunch.profiler as smprof

class Slow(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        time.sleep(0.002)
        return torch.randn(8), torch.randn(1)

smprof.configure(smprof.Config(output_dir=sys.argv[1]))
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
original_next = dl._BaseDataLoaderIter.__next__
smprof.start_profiling()
hooked = dl._BaseDataLoaderIter.__next__ is not original_next
for workers in (0, 2):  # worker processes (forked) record nothing and do not disturb the parent's spans
    for x, y in DataLoader(Slow(), batch_size=4, num_workers=workers):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
smprof.stop_profiling()
print(json.dumps({"hooked": hooked, "restored": dl._BaseDataLoaderIter.__next__ is original_next,
                  "post_hooks_left": len(optimizer_module._global_optimizer_post_hooks)}))
"""


@pytest.mark.slow  # a training process
def test_a_loop_without_annotations_has_steps_input_wait_and_memory(tmp_path):
    _, out = run_profiled_script(LOOP, tmp_path)
    assert out == {"hooked": True, "restored": True, "post_hooks_left": 0}
    rank = analysis_json(tmp_path)["ranks"]["0"]
    loop = rank["loop"]
    # 32 optimizer steps (16 batches twice): a step ends at each, the first has no known start
    assert loop["source"] == "optimizer.step hooks" and loop["count"] == 31 and loop["step"][0] == 2
    assert loop["input_source"] == "DataLoader hooks"
    # single-process loading: 4 samples × 2 ms of sleep per batch, inside the optimizer-step cycle
    single = [u for u, s in zip(loop["input_us"], loop["step"]) if 2 < s <= 16]
    assert min(single) >= 8000
    rss = rank["memory"]["process_rss"]
    assert rss["samples"] >= 2 and min(rss["bytes"]) > 20 * 2**20  # a Python process with torch: tens of MB
    assert "cuda_allocated" not in rank["memory"]  # no CUDA in this process: no allocator figures invented
