"""smp.DistributedOptimizer is a torch Optimizer that keeps every parameter group, sharded or not; smp.step returns
Python numbers per microbatch; post-step hooks run. Checked on 2 ranks against a plain torch reference."""

from __future__ import annotations

import pytest

from tests.modelparallel import area

pytestmark = pytest.mark.slow  # torchrun


GROUP = area.register(__name__, "optimizer_worker", {2: []})


@pytest.fixture(scope="module")
def ranks(_launches):
    return _launches.ranks(GROUP, 2)


@pytest.mark.parametrize("mode", ["sharded", "unsharded"])
def test_every_parameter_group_is_kept_and_the_numbers_match_one_process(ranks, mode):
    for rank in ranks:
        got = rank[mode]
        assert got["is_optimizer"]  # StepLR took it
        assert got["groups"] == got["ref_groups"]  # weight decay 0.1 / 0.0, per-group lr, halved by StepLR
        assert got["groups"][1]["lr"] == pytest.approx(0.05 * 0.5 ** 3)
        assert got["max_param_diff"] < 1e-6


def test_shard_optimizer_state_really_shards_the_state(ranks):
    sharded = [r["sharded"]["local_state_bytes"] for r in ranks]
    full = ranks[0]["sharded"]["full_state_bytes"]
    assert all(0 < b < full for b in sharded)
    assert sum(sharded) == full  # the two shards partition the whole state
    assert all(r["unsharded"]["local_state_bytes"] == full for r in ranks)


def test_step_returns_python_numbers_per_microbatch_and_runs_post_step_hooks(ranks):
    for rank in ranks:
        got = rank["unsharded"]
        assert [len(v) for v in got["per_microbatch"]] == [2, 2, 2]  # microbatches=2: one float each
        assert all(isinstance(x, float) for v in got["per_microbatch"] for x in v)
        assert got["hook_calls"] == 1 and got["hook_args_ok"]  # once, after the first step, as SMP v1
