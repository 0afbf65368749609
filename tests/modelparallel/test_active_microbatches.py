"""SMP's active_microbatches is honoured: with pp=2 and 4 microbatches, at most that many microbatches are held by
a stage between their forward and their backward, and the numbers are those of the unlimited run."""

from __future__ import annotations

import pytest

from tests.modelparallel import area

pytestmark = pytest.mark.slow  # torchrun


GROUP = area.register(__name__, "active_microbatches_worker", {2: []})


@pytest.fixture(scope="module")
def ranks(_launches):
    return _launches.ranks(GROUP, 2)


@pytest.mark.parametrize("schedule", ["simple", "interleaved"])
def test_active_microbatches_limits_the_microbatches_in_flight_with_the_same_losses(ranks, schedule):
    for rank in ranks:
        limited, free = rank[f"{schedule}_2"], rank[f"{schedule}_None"]
        assert limited["losses"] == free["losses"]
        assert limited["waves"] == 2 and limited["most_in_flight"] <= 2
    # without the limit GPipe holds all 4 on each stage, 1F1B up to 3 on the first: the limit changed something
    assert max(r[f"{schedule}_None"]["most_in_flight"] for r in ranks) > 2
