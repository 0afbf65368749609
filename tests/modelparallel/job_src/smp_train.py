"""A training script written for SageMaker's SMP v1, unchanged: parameters come from SM_HP_MP_PARAMETERS."""

import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F

import sagelaunch.modelparallel as smp

smp.init()
torch.manual_seed(0)
model = smp.DistributedModel(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(),
                                           nn.Linear(16, 4)))
optimizer = smp.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.1))


@smp.step
def train_step(model, x, y):
    loss = F.cross_entropy(model(x), y)
    model.backward(loss)
    return loss


losses = []
fail_at = int(os.environ.get("SM_HP_FAIL_RANK0_AT_STEP", "-1"))  # a test's hyperparameter: rank 0 raises there
for step in range(2):
    if step == fail_at and smp.rank() == 0:
        raise RuntimeError(f"rank 0 fails at step {step}")
    g = torch.Generator().manual_seed(step)
    x, y = torch.randn(8, 8, generator=g), torch.randint(0, 4, (8,), generator=g)
    optimizer.zero_grad()
    losses.append(train_step(model, x, y).reduce_mean().item())
    optimizer.step()
    print(f"step {step} loss {losses[-1]:.4f} pp_rank {smp.pp_rank()}")
report = {"env": json.loads(os.environ["SM_HP_MP_PARAMETERS"]), "pp_size": smp.pp_size(),
          "pp_rank": smp.pp_rank(), "microbatches": smp.num_microbatches(), "losses": losses,
          "local_params": [n for n, _ in model.local_named_parameters()]}
with open(os.path.join(os.environ["SM_OUTPUT_DATA_DIR"], f"smp_rank{smp.rank()}.json"), "w") as fd:
    json.dump(report, fd)
