"""One process of plain PyTorch doing what the BERT example's script does (tests/modelparallel/test_bert_example.py):
its model (modeling.py), optimizer (FusedLAMB, the class its smdistributed import gives), scheduler
(schedulers.PolyWarmUpScheduler), seed, files in its order and its criterion; with dp replicas, each step's batch is
the replicas' files together (their gradients averaged, as DDP does). Prints JSON: each step's loss per replica and
the final parameters.

usage: python bert_reference.py <run folder> <dp> <steps> <seed> <lr> <warmup> <max_steps>
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


def main(run: str, dp: int, steps: int, seed: int, lr: float, warmup: float, max_steps: int) -> dict:
    files = sorted(glob.glob(f"{run}/data/*training*"))
    random.Random(seed).shuffle(files)  # the script's epoch-0 order
    torch.manual_seed(seed)  # rank 0's seed (seed + local_rank); DDP gives every replica rank 0's weights
    config = modeling.BertConfig.from_json_file(f"{run}/bert_config.json")
    config.use_sequential = True
    modeling.ACT2FN["bias_gelu"] = modeling.bias_gelu_training
    model = modeling.BertForPreTraining(config)
    no_decay = ["bias", "gamma", "beta", "LayerNorm"]
    params = list(model.named_parameters())
    optimizer = FusedLAMB([
        {"params": [p for n, p in params if not any(nd in n for nd in no_decay)], "weight_decay": 0.01},
        {"params": [p for n, p in params if any(nd in n for nd in no_decay)], "weight_decay": 0.0}], lr=lr)
    scheduler = PolyWarmUpScheduler(optimizer, warmup=warmup, total_steps=max_steps)
    criterion = torch.nn.CrossEntropyLoss(ignore_index=-1)
    losses = []
    for step in range(steps):
        # step 0 reads file dp_rank; step k reads file k * world + rank (one file is one batch)
        rows = [load(files[(step * dp + r) % len(files)]) for r in range(dp)]
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
    run, dp, steps, seed, lr, warmup, max_steps = sys.argv[1:8]
    print(json.dumps(main(run, int(dp), int(steps), int(seed), float(lr), float(warmup), int(max_steps))))
