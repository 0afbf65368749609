"""smp.DistributedModel(backward_passes_per_step=N) is honoured (SMP v1: DDP all-reduces once per N backward
passes): with dp=2 and the GPT-2 example's accumulation loop (two @smp.step calls per optimizer.step()), DDP runs
one all-reduce per optimizer step instead of two, and the gradients and parameters equal N=1's and one process's."""

from __future__ import annotations

import pytest
import torch

from tests.modelparallel import area

pytestmark = pytest.mark.slow  # torchrun


GROUP = area.register(__name__, "accumulation_worker", {2: [{"name": "accumulation"}]})


@pytest.fixture(scope="module")
def ranks(_launches):
    return _launches.ranks(GROUP, 2)


def close(a, b) -> bool:
    return torch.allclose(torch.tensor(a), torch.tensor(b), rtol=1e-6, atol=1e-7)


def test_one_allreduce_per_optimizer_step_with_the_gradients_of_every_pass(ranks):
    for rank in ranks:
        n1, n2, single = rank["n1"], rank["n2"], rank["one_process"]
        assert n1["allreduces"] == 4 and n2["allreduces"] == 2  # 2 optimizer steps × (2 passes | 1) × one bucket
        for run in (n1, n2):
            for got, want in zip(run["grads"], single["grads"]):
                assert all(close(g, w) for g, w in zip(got, want))
            assert all(close(p, w) for p, w in zip(run["params"], single["params"]))
    assert ranks[0]["n2"]["params"] == ranks[1]["n2"]["params"]  # the replicas did not drift apart
