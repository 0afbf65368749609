"""One process of plain PyTorch doing what the BERT example's script does under SMP v1
(tests/modelparallel/test_bert_example.py): its model (modeling.py), optimizer (FusedLAMB, the class its
smdistributed import gives), scheduler (schedulers.PolyWarmUpScheduler), seed, files in its order and its criterion.
Prints JSON: each step's loss per replica and the final parameters.

What SMP v1 makes of the script's layout:
- each replica's batch is the one its pipeline's first rank (pp_rank 0) loads: SMP v1 runs the step on pp_rank 0's
  arguments (smdistributed-modelparallel's torch/step.py); with data parallelism the step's batch is the replicas'
  batches together (their gradients averaged, as DDP does). The script reads its first file by dp rank and the later
  ones by world rank; replica r's pp_rank 0 is world rank r * pp (SMP's default "cluster" placement).
- every stage keeps the weights its own rank drew (SMP v1 broadcasts parameters only within a data-parallel group,
  torch/model.py post_partition): the script seeds each rank by its local rank, so the parameters of stage s come
  from seed + s (replica 0's ranks); a parameter tied across stages takes the first holder's (stage 0's) value.
  `stages` (the settings' map from parameter name to stage) says where each parameter lives.

usage: python bert_reference.py <run folder> <settings JSON: dp, pp, steps, seed, lr, warmup, max_steps, stages>
(PYTHONPATH: the example's folder and sagelaunch's smdistributed stand-in)"""

from __future__ import annotations

import glob
import json
import random
import sys

import h5py
import numpy as np
import torch

import modeling
from schedulers import PolyWarmUpScheduler
from smdistributed.modelparallel.torch.optimizers import FusedLAMB


def load(path: str) -> tuple[torch.Tensor, ...]:
    """A file's rows as the script's pretraining_dataset gives them (labels -1 but at the masked positions)."""
    with h5py.File(path, "r") as f:
        d = {k: torch.from_numpy(np.asarray(f[k][:]).astype(np.int64)) for k in f}
    labels = torch.full_like(d["input_ids"], -1)
    for r in range(len(labels)):
        positions = d["masked_lm_positions"][r]
        padded = (positions == 0).nonzero()
        n = padded[0].item() if len(padded) else len(positions)
        labels[r, positions[:n]] = d["masked_lm_ids"][r, :n]
    return d["input_ids"], d["segment_ids"], d["input_mask"], labels, d["next_sentence_labels"]


def build(config, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)  # the script's seed + local_rank, drawn before it builds the model
    return modeling.BertForPreTraining(config)


def main(run: str, dp: int, pp: int, steps: int, seed: int, lr: float, warmup: float, max_steps: int,
         stages: dict[str, int] | None) -> dict:
    files = sorted(glob.glob(f"{run}/data/*training*"))
    random.Random(seed).shuffle(files)  # the script's epoch-0 order
    config = modeling.BertConfig.from_json_file(f"{run}/bert_config.json")
    config.use_sequential = True
    modeling.ACT2FN["bias_gelu"] = modeling.bias_gelu_training
    model = build(config, seed)  # DDP gives every replica dp rank 0's weights: replica 0's, stage 0 at local rank 0
    with torch.no_grad():
        for stage in range(1, pp):
            drawn = dict(build(config, seed + stage).named_parameters())
            for name, p in model.named_parameters():  # a tied parameter once, by its first name (stage 0's)
                if stages[name] == stage:
                    p.copy_(drawn[name])
    no_decay = ["bias", "gamma", "beta", "LayerNorm"]
    params = list(model.named_parameters())
    optimizer = FusedLAMB([
        {"params": [p for n, p in params if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in params if any(nd in n for nd in no_decay)], "weight_decay": 0.0}], lr=lr)
    scheduler = PolyWarmUpScheduler(optimizer, warmup=warmup, total_steps=max_steps)
    criterion = torch.nn.CrossEntropyLoss(ignore_index=-1)
    losses = []
    for step in range(steps):
        # the first file by dp rank, file k by the world rank of the replica's pp_rank 0 (one file is one batch)
        rows = [load(files[r % len(files)] if step == 0 else files[(step * dp * pp + r * pp) % len(files)])
                for r in range(dp)]
        per_replica = []
        for ids, segments, mask, labels, nsp in rows:
            scores, relationship = model(ids, segments, mask)
            per_replica.append(criterion(scores.view(-1, config.vocab_size), labels.view(-1))
                               + criterion(relationship.view(-1, 2), nsp.view(-1)))
        optimizer.zero_grad()
        torch.stack(per_replica).mean().backward()
        scheduler.step()
        optimizer.step()
        losses.append([loss.item() for loss in per_replica])
    return {"losses": losses, "params": {k: v.tolist() for k, v in model.state_dict().items()}}


if __name__ == "__main__":
    settings = json.loads(sys.argv[2])
    print(json.dumps(main(sys.argv[1], **settings)))
