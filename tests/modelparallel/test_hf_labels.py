"""A pipelined Hugging Face model takes the keyword arguments HF training loops pass (`labels=`, `attention_mask=`)
and returns the model's own loss: at pp=2 its losses and every stage's parameters equal one process's."""

from __future__ import annotations

import pytest
import torch

from tests.modelparallel import area

pytestmark = pytest.mark.slow  # torchrun

CASES = [
    {"name": "roberta_simple_mb2", "model": "roberta", "schedule": "simple", "microbatches": 2},
    {"name": "gpt2_interleaved_mb2", "model": "gpt2", "schedule": "interleaved", "microbatches": 2},
]


GROUP = area.register(__name__, "hf_labels_worker", {2: CASES})


@pytest.fixture(scope="module")
def ranks(_launches):
    return _launches.ranks(GROUP, 2)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_labels_reach_the_model_and_its_loss_equals_one_process(ranks, case):
    reference = ranks[0][case["name"] + "_one_process"]
    last = ranks[1][case["name"]]  # pp=2: rank 1 runs the last stage, where the model computes its loss
    assert last["losses"] == pytest.approx(reference["losses"], abs=1e-5)
    held = {}
    for rank in ranks:
        params = rank[case["name"]]["params"]
        assert params  # each stage holds some of the model
        for name, value in params.items():
            assert torch.allclose(torch.tensor(value), torch.tensor(reference["params"][name]), atol=1e-5), name
            held[name] = True
    assert set(held) == set(reference["params"])  # the stages together hold the whole model
