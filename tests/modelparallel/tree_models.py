"""Module trees without a layer stack, as SMP v1 users write them: the MNIST example's two sub-networks with
functional ops between their layers, a BERT-like model whose encoder is an nn.Sequential nested inside it (embeddings
and heads around it, a tuple out), and two that cannot be split: a residual across the boundary, and a branch on an
earlier module's values."""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, SEQ, WIDTH = 32, 6, 16
EXAMPLE_BERT = Path(__file__).resolve().parents[1] / "data" / "smp_examples" / "bert"
# the BERT example's bert_config.json (dropout 0), scaled down; vocab_size a multiple of 8, as the script pads it
BERT_VOCAB = 40
BERT_CONFIG = {"attention_probs_dropout_prob": 0, "hidden_act": "gelu", "hidden_dropout_prob": 0, "hidden_size": 16,
               "initializer_range": 0.02, "intermediate_size": 32, "max_position_embeddings": 16,
               "num_attention_heads": 2, "num_hidden_layers": 4, "type_vocab_size": 2, "vocab_size": BERT_VOCAB}


class Net1(nn.Module):  # the MNIST example's, scaled down (1×10×10 images)
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        return torch.flatten(x, 1)


class Net2(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(72, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), 1)


class GroupedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.net1 = Net1()
        self.net2 = Net2()

    def forward(self, x):
        return self.net2(self.net1(x))


class Layer(nn.Module):
    """One encoder layer (a residual inside it), called by an nn.Sequential with one tensor."""

    def __init__(self):
        super().__init__()
        self.dense = nn.Linear(WIDTH, WIDTH)
        self.norm = nn.LayerNorm(WIDTH)

    def forward(self, hidden):
        return self.norm(hidden + torch.tanh(self.dense(hidden)))


class SequentialBert(nn.Module):
    """Embeddings → an nn.Sequential encoder → two heads; keyword inputs, a tuple out (BERT pretraining's shape)."""

    def __init__(self):
        super().__init__()
        self.embeddings = nn.Embedding(VOCAB, WIDTH)
        self.positions = nn.Embedding(SEQ, WIDTH)
        self.encoder = nn.Sequential(*[Layer() for _ in range(4)])
        self.lm_head = nn.Linear(WIDTH, VOCAB)
        self.nsp_head = nn.Linear(WIDTH, 2)

    def forward(self, input_ids, attention_mask=None):
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        hidden = self.embeddings(input_ids) + self.positions(positions)
        if attention_mask is not None:
            hidden = hidden * attention_mask.unsqueeze(-1).to(hidden.dtype)
        hidden = self.encoder(hidden)
        return self.lm_head(hidden), self.nsp_head(hidden[:, 0])


class ResidualAcross(nn.Module):
    """`a`'s output is used again after `b`: a stage starting at `b` would need it."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x)
        return self.b(h) + h


class BranchOnValues(nn.Module):
    """Which module runs depends on `a`'s output: data-dependent control flow across the partitions."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 8)
        self.b = nn.Linear(8, 8)
        self.c = nn.Linear(8, 8)

    def forward(self, x):
        h = self.a(x)
        return self.b(h) if h.sum() > 0 else self.c(h)


class TwoMlps(nn.Module):
    """Two nn.Sequential Linear pairs (what tensor parallelism splits) with functional code between them and a head:
    a tree, not a layer stack, for pipeline × tensor parallelism."""

    def __init__(self):
        super().__init__()
        self.first = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
        self.second = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
        self.head = nn.Linear(8, 4)

    def forward(self, x):
        h = torch.tanh(self.first(x))
        return self.head(0.5 * self.second(h))


def example_bert() -> nn.Module:
    """The BERT example's own BertForPreTraining (tests/data/smp_examples/bert/modeling.py, unchanged), built as its
    sagemaker_smp_pretrain.py builds it with --use_sequential 1: an nn.Sequential encoder of layers passing
    (hidden, mask) tuples, and the MLM decoder tied to the word embeddings."""
    from sagelaunch.launcher.local.job_modules import JOB_MODULES, stand_in_paths

    for path in (str(EXAMPLE_BERT), *stand_in_paths(JOB_MODULES, sys.executable)[0]):  # as a job sees it
        if path not in sys.path:
            sys.path.append(path)
    import modeling

    config = modeling.BertConfig.from_dict(BERT_CONFIG)
    config.use_sequential = True
    modeling.ACT2FN["bias_gelu"] = modeling.bias_gelu_training
    return modeling.BertForPreTraining(config)


TREES = {"grouped_net": GroupedNet, "sequential_bert": SequentialBert, "residual_across": ResidualAcross,
         "branch_on_values": BranchOnValues, "two_mlps": TwoMlps,
         "example_bert": example_bert}


def build(name: str, seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return TREES[name]()


def batch(name: str, step: int, n: int = 8) -> dict:
    g = torch.Generator().manual_seed(100 + step)
    if name == "grouped_net":
        return {"x": torch.randn(n, 1, 10, 10, generator=g), "y": torch.randint(0, 10, (n,), generator=g)}
    if name == "sequential_bert":
        ids = torch.randint(0, VOCAB, (n, SEQ), generator=g)
        mask = torch.ones(n, SEQ)
        mask[::2, -2:] = 0
        return {"input_ids": ids, "attention_mask": mask, "nsp": torch.randint(0, 2, (n,), generator=g)}
    if name == "two_mlps":
        return {"x": torch.randn(n, 8, generator=g), "y": torch.randn(n, 4, generator=g)}
    if name == "example_bert":  # what the script's pretraining_dataset yields: two masked positions per row
        ids = torch.randint(0, BERT_VOCAB, (n, 8), generator=g)
        mask = torch.ones(n, 8, dtype=torch.long)
        mask[::2, -2:] = 0
        labels = torch.full((n, 8), -1)
        labels[:, 1:3] = ids[:, 1:3]
        return {"input_ids": ids, "token_type_ids": torch.randint(0, 2, (n, 8), generator=g), "attention_mask": mask,
                "masked_lm_labels": labels, "next_sentence_labels": torch.randint(0, 2, (n,), generator=g)}
    return {"x": torch.randn(n, 8, generator=g), "y": torch.randn(n, 8, generator=g)}


def loss_of(name: str, model, b: dict) -> torch.Tensor:
    if name == "grouped_net":
        return F.nll_loss(model(b["x"]), b["y"])
    if name == "sequential_bert":
        scores, nsp = model(input_ids=b["input_ids"], attention_mask=b["attention_mask"])
        return F.cross_entropy(scores.reshape(-1, VOCAB), b["input_ids"].reshape(-1)) + F.cross_entropy(nsp, b["nsp"])
    if name == "example_bert":  # the script's BertPretrainingCriterion
        scores, relationship = model(input_ids=b["input_ids"], token_type_ids=b["token_type_ids"],
                                     attention_mask=b["attention_mask"])
        return (F.cross_entropy(scores.view(-1, BERT_VOCAB), b["masked_lm_labels"].view(-1),
                                ignore_index=-1)
                + F.cross_entropy(relationship.view(-1, 2), b["next_sentence_labels"].view(-1), ignore_index=-1))
    return F.mse_loss(model(b["x"]), b["y"])
