"""The order in which one pipeline rank runs its chunks' forwards and backwards under sagelaunch.modelparallel,
which runs torch.distributed.pipelining's schedules: ScheduleInterleaved1F1B ("interleaved") and ScheduleGPipe
("simple"), in waves of active_microbatches (modelparallel/pipeline.py `PipelineRunner.waves`).

The rules are torch's (torch/distributed/pipelining/schedules.py, `_get_warmup_ops`, `_get_1f1b_rank_ops` and
`ScheduleInterleaved1F1B._calculate_single_rank_operations`): rounds of microbatches, a warm-up of forwards, then
one forward and one backward in turn, then the remaining backwards. Only the order on one rank matters for what
that rank holds, so the idle slots torch pads the order with are left out.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

Schedule = Literal["interleaved", "simple"]


class Action(NamedTuple):
    forward: bool
    chunk: int  # the rank's local chunk (0 .. virtual-1); its global stage is chunk * pp + rank
    microbatch: int


def wave_size(microbatches: int, active: int | None, pp: int, schedule: Schedule, virtual: int) -> int:
    """PipelineRunner.waves: at most active_microbatches at once (all without it); the interleaved schedule runs
    whole rounds of pp microbatches, so a wave shrinks until the rounds divide it."""
    size = min(active or microbatches, microbatches)
    if schedule != "simple":
        while size > 1 and size % max(1, size // pp):
            size -= 1
    return size


def rank_order(rank: int, pp: int, virtual: int, microbatches: int, schedule: Schedule) -> list[Action]:
    """One wave's forwards and backwards on pipeline rank `rank`, in the order it runs them."""
    if schedule == "simple":
        return ([Action(True, c, m) for c in range(virtual) for m in range(microbatches)]
                + [Action(False, c, m) for c in reversed(range(virtual)) for m in range(microbatches)])
    rounds = max(1, microbatches // pp)
    per_round = microbatches // rounds
    total = virtual * microbatches
    warmup = min((virtual - 1) * per_round + 2 * (pp - 1 - rank), total)

    def forward_chunk(op: int) -> int:
        return (op // per_round) % virtual

    def backward_chunk(op: int) -> int:
        return virtual - 1 - ((op - warmup) // per_round) % virtual

    fwd_next = [0] * virtual
    bwd_next = [0] * virtual
    order: list[Action] = []

    def forward(op: int) -> None:
        c = forward_chunk(op)
        order.append(Action(True, c, fwd_next[c]))
        fwd_next[c] += 1

    def backward(op: int) -> None:
        c = backward_chunk(op)
        order.append(Action(False, c, bwd_next[c]))
        bwd_next[c] += 1

    for op in range(total + warmup):
        if op < warmup:
            forward(op)
        elif op < total:
            forward(op)
            backward(op)
        else:
            backward(op)
    return order
