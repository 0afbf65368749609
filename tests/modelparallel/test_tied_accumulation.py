"""A weight tied across pipeline stages (the BERT example's MLM decoder and word embeddings, at pp=2) trained by a
loop that accumulates two @smp.step calls per optimizer.step() with the default backward_passes_per_step=1: its
gradient is summed over the stages after every call, and the second sum must add only the second call's part —
summing the whole gradient again counted the first call's twice. Every stage's gradients and parameters equal one
process's."""

from __future__ import annotations

import pytest
import torch

from tests.modelparallel import area

pytestmark = pytest.mark.slow  # torchrun


GROUP = area.register(__name__, "tied_accumulation_worker", {2: [{"name": "tied_accumulation"}]})


@pytest.fixture(scope="module")
def ranks(_launches):
    return _launches.ranks(GROUP, 2)


def test_the_tied_weight_gets_each_calls_gradient_once(ranks):
    tied = ("bert.embeddings.word_embeddings.weight", "cls.predictions.decoder.weight")
    held = [name for rank in ranks for name in rank["pipelined"]["params"] if name.removeprefix("module.") in tied]
    assert len(held) == 2  # one copy on each stage
    for rank in ranks:
        single, run = rank["one_process"], rank["pipelined"]
        for got, want in zip(run["grads"], single["grads"]):
            assert got and all(torch.allclose(torch.tensor(g), torch.tensor(want[n.removeprefix("module.")]),
                                              rtol=1e-5, atol=1e-6) for n, g in got.items()), "a gradient differs"
        for name, value in run["params"].items():
            assert torch.allclose(torch.tensor(value), torch.tensor(single["params"][name.removeprefix("module.")]),
                                  rtol=1e-5, atol=1e-6), name
