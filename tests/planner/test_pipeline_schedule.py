"""The planner's pipeline order (planner/pipeline_schedule.py) is torch's: each rank's forwards and backwards under
ScheduleInterleaved1F1B, as torch.distributed.pipelining's own `_get_1f1b_rank_ops` lays them out (its idle slots
left out), and the waves modelparallel's PipelineRunner cuts the microbatches into."""

from __future__ import annotations

import pytest

from sagelaunch.planner.pipeline_schedule import rank_order, wave_size


def _torch_order(rank: int, pp: int, virtual: int, microbatches: int) -> list[tuple[bool, int, int]]:
    from torch.distributed.pipelining.schedules import _ComputationType, _get_1f1b_rank_ops, _get_warmup_ops

    rounds = max(1, microbatches // pp)
    per_round = microbatches // rounds
    warmup = _get_warmup_ops(rank, virtual, per_round, pp, microbatches)
    ops = _get_1f1b_rank_ops(
        virtual, pp, warmup, virtual * microbatches - warmup, warmup, rank,
        lambda step: ((step // per_round) % virtual) * pp + rank,
        lambda step: (virtual - 1 - ((step - warmup) // per_round) % virtual) * pp + rank)
    return [(a.computation_type == _ComputationType.FORWARD, a.stage_index // pp, a.microbatch_index)
            for a in ops if a is not None]


@pytest.mark.parametrize("pp, virtual, microbatches", [(2, 2, 4), (2, 1, 4), (4, 2, 8), (4, 3, 4), (3, 2, 6),
                                                       (2, 2, 2), (4, 2, 16)])
def test_interleaved_order_is_torchs(pp, virtual, microbatches):
    for rank in range(pp):
        mine = [tuple(a) for a in rank_order(rank, pp, virtual, microbatches, "interleaved")]
        assert mine == _torch_order(rank, pp, virtual, microbatches), (rank, mine)


def test_gpipe_runs_every_forward_then_every_backward():
    order = rank_order(0, 2, 1, 3, "simple")
    assert [a.forward for a in order] == [True] * 3 + [False] * 3


def test_waves_are_the_runners():
    from sagelaunch.modelparallel.pipeline.runner import PipelineRunner

    for pp, active, n in ((2, None, 4), (2, 3, 8), (4, 6, 8), (2, 5, 10)):
        runner = PipelineRunner([object()] * 2, [0, pp], 2 * pp, None, "cpu", "interleaved", True, active)
        assert wave_size(n, active, pp, "interleaved", 2) == len(runner.waves(n)[0]), (pp, active, n)
