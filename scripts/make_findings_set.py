"""Run the CPU training loops of the findings' labelled set once and store their profiles as test data.

    PYTHONPATH=. python scripts/make_findings_set.py [OUT_DIR] [CASE ...]

Each case is a real training script, written the way users write loops (the SageMaker docs' annotation style, no
annotations, the Hugging Face Trainer with sagelaunch's ProfilerCallback, 2-rank DDP and a 2-stage SMP pipeline under
torchrun), profiled by sagelaunch's profiler with its defaults. The expected findings of every case were written first, in
tests/data/profiler/findings_set/labels.json; tests/profiler/test_findings_scored.py scores the rules on them.
The profiles land in OUT_DIR/<case>/ (default: tests/data/profiler/findings_set/), as a job's profiler output.
Run it on an idle machine: the cases are short (1–3 s of training each) and a busy machine adds its own pauses.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "tests" / "data" / "profiler" / "findings_set"

PRELUDE = '''
import os, sys, time
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, TensorDataset
import sagelaunch.profiler as smprof

torch.manual_seed(0)
torch.set_num_threads(1)
smprof.configure(smprof.Config(output_dir=sys.argv[1], rank=int(os.environ.get("RANK", 0))))


class SlowDataset(Dataset):
    """Decodes each sample slowly (a sleep stands in for JPEG decoding or tokenisation)."""

    def __init__(self, n, dim, delay_s):
        self.x, self.y, self.delay = torch.randn(n, dim), torch.randn(n, 1), delay_s

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        time.sleep(self.delay)
        return self.x[i], self.y[i]


def mlp(dim=256, hidden=1024):
    return nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
'''

# The SageMaker Profiler docs' loop: step_N around the whole step, Forward/Loss/Backward/Optimizer inside it.
DOCS_LOOP = '''
def train(loader, model, steps, extra=lambda i: None):
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    smprof.start_profiling()
    i = 0
    while i < steps:
        for inputs, labels in loader:
            i += 1
            with smprof.annotate(f"step_{i}"):
                opt.zero_grad()
                with smprof.annotate("Forward"):
                    outputs = model(inputs)
                    extra(i)
                with smprof.annotate("Loss"):
                    loss = nn.functional.mse_loss(outputs, labels)
                with smprof.annotate("Backward"):
                    loss.backward()
                with smprof.annotate("Optimizer"):
                    opt.step()
            if i >= steps:
                break
    smprof.stop_profiling()
'''

# The plain loop most scripts start from: no annotations at all.
PLAIN_LOOP = '''
def train(loader, model, epochs=1, optimizer=torch.optim.AdamW, lr=1e-3):
    opt = optimizer(model.parameters(), lr=lr)
    smprof.start_profiling()
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    smprof.stop_profiling()
'''

CASES: dict[str, str] = {
    "docs_healthy": DOCS_LOOP + '''
train(DataLoader(TensorDataset(torch.randn(4096, 256), torch.randn(4096, 1)), batch_size=64, shuffle=True), mlp(), 150)
''',
    "docs_slow_loader": DOCS_LOOP + '''
train(DataLoader(SlowDataset(4096, 256, 0.0002), batch_size=32, shuffle=True), mlp(), 120)
''',
    "plain_healthy": PLAIN_LOOP + '''
train(DataLoader(TensorDataset(torch.randn(4096, 256), torch.randn(4096, 1)), batch_size=64), mlp(), epochs=3)
''',
    "plain_slow_loader": PLAIN_LOOP + '''
train(DataLoader(SlowDataset(3840, 256, 0.0002), batch_size=32), mlp())
''',
    "inside_step_loader": '''
model, loader = mlp(), DataLoader(SlowDataset(3840, 256, 0.0002), batch_size=32)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
it = iter(loader)
smprof.start_profiling()
for step in range(1, 121):
    with smprof.annotate(f"step_{step}"):
        x, y = next(it)
        opt.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        opt.step()
smprof.stop_profiling()
''',
    "tiny_steps_healthy": DOCS_LOOP + '''
train(DataLoader(TensorDataset(torch.randn(9600, 16), torch.randn(9600, 1)), batch_size=16), nn.Linear(16, 1), 600)
''',
    "tiny_ops": PLAIN_LOOP + '''
class ManySmall(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(8))

    def forward(self, x):
        for _ in range(150):
            x = x * self.w + 0.001
        return x.sum(dim=1, keepdim=True)

train(DataLoader(TensorDataset(torch.randn(3200, 8), torch.randn(3200, 1)), batch_size=16), ManySmall(),
      optimizer=torch.optim.SGD, lr=1e-6)
''',
    "leak": DOCS_LOOP + '''
kept = []
model = mlp()
def keep(i):  # the classic leak: a tensor that holds the graph, appended every step
    kept.append(torch.randn(1024, 256, requires_grad=True) * 1.0)
train(DataLoader(TensorDataset(torch.randn(4096, 256), torch.randn(4096, 1)), batch_size=64), model, 160, keep)
''',
    "checkpoint_every_50": '''
import tempfile
class Recommender(nn.Module):  # a large sparse embedding (25 MB) and a small MLP: cheap steps, a large checkpoint
    def __init__(self):
        super().__init__()
        self.emb, self.head = nn.EmbeddingBag(100_000, 64, sparse=True), mlp(64, 128)
    def forward(self, ids):
        return self.head(self.emb(ids))
model = Recommender()
loader = DataLoader(TensorDataset(torch.randint(0, 100_000, (12800, 8)), torch.randn(12800, 1)), batch_size=64)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
ckpt = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
smprof.start_profiling()
for step, (x, y) in enumerate(loader, 1):
    opt.zero_grad()
    nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    if step % 50 == 0:
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict()}, ckpt)
        with open(ckpt, "rb+") as f:
            os.fsync(f.fileno())
smprof.stop_profiling()
''',
    "hf_healthy": '''
from transformers import Trainer, TrainingArguments
from sagelaunch.profiler.hf_callback import ProfilerCallback

class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = mlp()
    def forward(self, x, labels=None):
        out = self.net(x)
        return {"loss": nn.functional.mse_loss(out, labels), "logits": out}

class Rows(Dataset):
    def __init__(self, n, delay_s=0.0):
        self.x, self.y, self.delay = torch.randn(n, 256), torch.randn(n, 1), delay_s
    def __len__(self):
        return len(self.x)
    def __getitem__(self, i):
        if self.delay:
            time.sleep(self.delay)
        return {"x": self.x[i], "labels": self.y[i]}

DELAY = 0.0
args = TrainingArguments(output_dir=os.path.join(sys.argv[1], "..", "hf-out"), per_device_train_batch_size=32,
                         max_steps=120, logging_steps=1000, save_strategy="no", report_to=[], use_cpu=True,
                         dataloader_num_workers=0, disable_tqdm=True)
Trainer(model=Regressor(), args=args, train_dataset=Rows(4096, DELAY), callbacks=[ProfilerCallback()]).train()
''',
    "ddp_healthy": DOCS_LOOP + '''
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler
dist.init_process_group("gloo")
RANK = dist.get_rank()
data = TensorDataset(torch.randn(8192, 256), torch.randn(8192, 1))
DATA = data
SLOW_FORWARD = lambda i: None
model = nn.parallel.DistributedDataParallel(mlp())
train(DataLoader(DATA, batch_size=64, sampler=DistributedSampler(DATA)), model, 100, SLOW_FORWARD)
dist.destroy_process_group()
''',
}
CASES["hf_slow_loader"] = CASES["hf_healthy"].replace("DELAY = 0.0", "DELAY = 0.0002")
CASES["ddp_compute_straggler"] = CASES["ddp_healthy"].replace(
    "SLOW_FORWARD = lambda i: None",
    "_w = torch.randn(384, 384)\n"
    "def SLOW_FORWARD(i):  # rank 1 alone does more work in Forward\n"
    "    if RANK == 1:\n"
    "        for _ in range(3):\n"
    "            _w @ _w\n")
CASES["ddp_input_straggler"] = CASES["ddp_healthy"].replace(
    "DATA = data", "DATA = SlowDataset(8192, 256, 0.0002) if RANK == 1 else data")
# SMP v1's pipeline (sagelaunch's modelparallel) on CPU: 2 stages, 2 microbatches, as a SageMaker job delivers its
# parameters (SM_HP_MP_PARAMETERS); the profiler records them in the profile
# the SMP cases' optimizer and step function, as SMP's examples write them
SMP_STEP = '''opt = smp.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=1e-3))

@smp.step
def train_step(model, x, y):
    loss = F.mse_loss(model(x), y)
    model.backward(loss)
    return loss
'''
CASES["smp_pipeline"] = '''
import torch.nn.functional as F
import sagelaunch.modelparallel as smp
smp.init()
model = smp.DistributedModel(nn.Sequential(*[nn.Sequential(nn.Linear(256, 256), nn.ReLU()) for _ in range(8)],
                                           nn.Linear(256, 1)))
''' + SMP_STEP + '''
loader, step = DataLoader(TensorDataset(torch.randn(3840, 256), torch.randn(3840, 1)), batch_size=64), 0
smprof.start_profiling()
for epoch in range(4):  # 240 steps: the pipeline's first ~15 steps are its warm-up (schedules, gloo)
    for x, y in loader:
        step += 1
        with smprof.annotate(f"step_{step}"):
            opt.zero_grad()
            train_step(model, x, y)
            opt.step()
smprof.stop_profiling()
'''
# A step the phases do not explain: the docs' annotations, and something unannotated waits inside step_N before
# Forward (a batch taken from a queue another process fills, no DataLoader) or between the step annotations
# (batches made by a generator after the step closes)
CASES["wait_before_forward"] = DOCS_LOOP.replace("                opt.zero_grad()\n",
                                                 "                opt.zero_grad()\n                time.sleep(0.02)\n") + '''
train(DataLoader(TensorDataset(torch.randn(4096, 64), torch.randn(4096, 1)), batch_size=64), mlp(64, 128), 80)
'''
CASES["generator_between_steps"] = '''
def batches(n):  # built by hand, no DataLoader: the next batch is made after step_N closes
    for _ in range(n):
        time.sleep(0.015)
        yield torch.randn(64, 64), torch.randn(64, 1)

model = mlp(64, 128)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
smprof.start_profiling()
for i, (x, y) in enumerate(batches(100), 1):
    with smprof.annotate(f"step_{i}"):
        opt.zero_grad()
        with smprof.annotate("Forward"):
            out = model(x)
        with smprof.annotate("Backward"):
            nn.functional.mse_loss(out, y).backward()
        with smprof.annotate("Optimizer"):
            opt.step()
smprof.stop_profiling()
'''
# A healthy loop on a busy host: the script itself starts two busy-loop processes beside it (other jobs on the
# machine) and stops them when it ends
CASES["docs_busy_host"] = DOCS_LOOP + '''
import subprocess
hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
try:
    train(DataLoader(TensorDataset(torch.randn(4096, 64), torch.randn(4096, 1)), batch_size=64), mlp(64, 128), 400)
finally:
    for h in hogs:
        h.kill()
        h.wait()
'''
# Gradient accumulation as users write it: the docs' annotations around every micro-batch, the optimizer every 4th
CASES["docs_accumulation"] = '''
model = mlp()
loader = DataLoader(TensorDataset(torch.randn(4096, 256), torch.randn(4096, 1)), batch_size=32)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
ACCUMULATE = 4
smprof.start_profiling()
for epoch in range(2):
    for i, (x, y) in enumerate(loader, 1):
        step = epoch * len(loader) + i
        with smprof.annotate(f"step_{step}"):
            with smprof.annotate("Forward"):
                loss = nn.functional.mse_loss(model(x), y) / ACCUMULATE
            with smprof.annotate("Backward"):
                loss.backward()
            if step % ACCUMULATE == 0:
                with smprof.annotate("Optimizer"):
                    opt.step()
                    opt.zero_grad()
smprof.stop_profiling()
'''
# ... and the plain loop accumulating over 4 batches: optimizer.step (found by our hook) every 4th batch
CASES["plain_accumulation"] = '''
model = mlp()
loader = DataLoader(TensorDataset(torch.randn(4096, 256), torch.randn(4096, 1)), batch_size=32)
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
smprof.start_profiling()
for epoch in range(2):
    for i, (x, y) in enumerate(loader, 1):
        (nn.functional.mse_loss(model(x), y) / 4).backward()
        if i % 4 == 0:
            opt.step()
            opt.zero_grad()
smprof.stop_profiling()
'''
# Stragglers the step annotations do not frame: rank 1's batches come from a generator (no DataLoader) that takes
# ~25 ms between its step annotations; and rank 1 doing ~12% more Forward compute than rank 0
CASES["ddp_generator_straggler"] = CASES["ddp_healthy"].replace(
    "train(DataLoader(DATA, batch_size=64, sampler=DistributedSampler(DATA)), model, 100, SLOW_FORWARD)",
    "def batches(n):  # rank 1 builds its batches by hand, slowly\n"
    "    for _ in range(n):\n"
    "        if RANK == 1:\n"
    "            time.sleep(0.025)\n"
    "        yield torch.randn(64, 256), torch.randn(64, 1)\n"
    "train(batches(100), model, 100, SLOW_FORWARD)")
CASES["ddp_small_compute_straggler"] = CASES["ddp_healthy"].replace(
    "SLOW_FORWARD = lambda i: None",
    "_w = torch.randn(384, 384)\n"
    "def SLOW_FORWARD(i):  # rank 1 alone does a little more work in Forward\n"
    "    if RANK == 1:\n"
    "        _w @ _w\n")
# A GPipe (fill-drain) schedule written by hand over torch.distributed send/recv, 2 stages, m microbatches. Each
# stage's work takes a FIXED wall time (forward sleeps 20 ms, backward 40 ms, through an autograd.Function) so the
# schedule alone sets the bubble, whatever else the machine runs: it tests the bubble's measurement, not a model.
# Each blocking receive is annotated pipeline_wait (the name the loop analysis reads); the expected wait share of a
# step is (p-1)/(m+p-1): 1/2, 1/3, 1/5 for m = 1, 2, 4.
GPIPE = """
import torch.distributed as dist
dist.init_process_group("gloo")
RANK, MB = dist.get_rank(), json.loads(os.environ["SM_HP_MP_PARAMETERS"])["microbatches"]
FORWARD_S = 0.02


class FixedTime(torch.autograd.Function):
    \"\"\"Identity whose forward sleeps FORWARD_S and backward twice that: a stage of known cost.\"\"\"

    @staticmethod
    def forward(ctx, x):
        time.sleep(FORWARD_S)
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        time.sleep(2 * FORWARD_S)
        return g


stage = nn.Linear(64, 64)
opt = torch.optim.SGD(stage.parameters(), lr=1e-3)


def recv(shape):
    buf = torch.empty(shape)
    with smprof.annotate("pipeline_wait"):  # blocked until the peer stage sends
        dist.recv(buf, src=1 - RANK)
    return buf


smprof.start_profiling()
for step in range(1, 31):
    with smprof.annotate(f"step_{step}"):
        opt.zero_grad()
        outs, ins, sends = [], [], []
        for i in range(MB):  # fill: every microbatch's forward
            x = torch.randn(16, 64) if RANK == 0 else recv((16, 64)).requires_grad_()
            with smprof.annotate("Forward"):
                y = FixedTime.apply(stage(x))
            if RANK == 0:
                sends.append(dist.isend(y.detach(), dst=1))
            outs.append(y)
            ins.append(x)
        for i in reversed(range(MB)):  # drain: every microbatch's backward, last first
            grad = recv((16, 64)) if RANK == 0 else None
            with smprof.annotate("Backward"):
                if RANK == 0:
                    outs[i].backward(grad)
                else:
                    outs[i].pow(2).mean().backward()
            if RANK == 1:
                sends.append(dist.isend(ins[i].grad, dst=0))
        with smprof.annotate("Optimizer"):
            opt.step()
        for w in sends:
            w.wait()
smprof.stop_profiling()
dist.destroy_process_group()
"""
for _mb in (1, 2, 4):
    CASES[f"gpipe_fixed_mb{_mb}"] = "import json\n" + GPIPE
# sagelaunch's own SMP pipeline with stages of fixed time (the FixedTime of the GPipe cases): its blocking receives and
# the step's output exchange are marked pipeline_wait by modelparallel itself; the script annotates steps only.
# "simple" runs GPipe with one block per rank; "interleaved" runs Interleaved1F1B with two of four blocks per rank
SMP_FIXED = """
import json
import torch.nn.functional as F
import sagelaunch.modelparallel as smp
BLOCKS, FORWARD_S = int(os.environ.get("SMP_FIXED_BLOCKS", "2")), 0.02


class FixedTime(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        time.sleep(FORWARD_S / (BLOCKS // 2))  # a rank's forward work per microbatch: FORWARD_S, however split
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        time.sleep(2 * FORWARD_S / (BLOCKS // 2))
        return g


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(64, 64)

    def forward(self, x):
        return FixedTime.apply(self.lin(x))


smp.init()
model = smp.DistributedModel(nn.Sequential(*[Block() for _ in range(BLOCKS)]))
""" + SMP_STEP + """
smprof.start_profiling()
for step in range(1, 31):
    x, y = torch.randn(64, 64), torch.randn(64, 64)
    with smprof.annotate(f"step_{step}"):
        opt.zero_grad()
        train_step(model, x, y)
        opt.step()
smprof.stop_profiling()
"""
SMP_FIXED_CASES = {f"smp_fixed_mb{mb}": ("simple", mb, 2) for mb in (1, 2, 4)}
SMP_FIXED_CASES["smp_interleaved_fixed_mb2"] = ("interleaved", 2, 4)
for _name in SMP_FIXED_CASES:
    CASES[_name] = SMP_FIXED
DDP = {*SMP_FIXED_CASES, "ddp_healthy", "ddp_compute_straggler", "ddp_input_straggler", "smp_pipeline", "ddp_generator_straggler",
       "ddp_small_compute_straggler", "gpipe_fixed_mb1", "gpipe_fixed_mb2", "gpipe_fixed_mb4"}  # two processes, torchrun
ENV = {"smp_pipeline": {"SM_HP_MP_PARAMETERS": '{"pipeline_parallel_degree": 2, "microbatches": 2}'},
       **{f"gpipe_fixed_mb{mb}": {"SM_HP_MP_PARAMETERS": '{"pipeline_parallel_degree": 2, "microbatches": %d}' % mb}
          for mb in (1, 2, 4)},
       **{name: {"SM_HP_MP_PARAMETERS": json.dumps({"pipeline_parallel_degree": 2, "microbatches": mb, "pipeline": pipe}),
                 "SMP_FIXED_BLOCKS": str(blocks)} for name, (pipe, mb, blocks) in SMP_FIXED_CASES.items()}}


def run_case(name: str, out: Path) -> None:
    dest = out / name
    shutil.rmtree(dest, ignore_errors=True)
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / f"{name}.py"
        script.write_text(PRELUDE + CASES[name])
        prof = Path(tmp) / "profile"
        env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1", **ENV.get(name, {})}
        env.pop("SAGELAUNCH_PROFILER_CONFIG", None)
        if name in DDP:
            cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2", "--master-port", "29631",
                   str(script), str(prof)]
        else:
            cmd = [sys.executable, str(script), str(prof)]
        subprocess.run(cmd, check=True, env=env, cwd=tmp, stdout=subprocess.DEVNULL)
        for f in sorted(prof.rglob("*.parquet")):  # rank traces and the host's utilisation samples
            target = dest / "algo-1" / f.relative_to(prof).relative_to(f.relative_to(prof).parts[0])
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, target)
    print(f"{name}: {sum(f.stat().st_size for f in dest.rglob('*.parquet')) / 1024:.0f} KiB")


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else OUT
    names = argv[1:] or list(CASES)
    for name in names:
        run_case(name, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
