"""The pipeline_bubble finding's yardstick: the bubble the job's schedule leaves even with perfectly even stages."""

from __future__ import annotations

from sagelaunch.jobspec.pipeline_schedule import bubble_share
from sagelaunch.profiler.records import Evidence

# measured above this many times the schedule's share, the rest of the wait is not the schedule's: uneven stages or the
# time activations take between them, which more microbatches do not cure
BEYOND_SCHEDULE_RATIO = 1.5
SOURCE = "Narayanan et al. 2021 (arXiv 2104.04473) §2.2: (p-1)/(v*m+p-1) of a step"


def expected_bubble(pipeline_degree: int, microbatches: int, virtual_stages: int = 1,
                    microbatches_per_fill: int | None = None) -> dict[str, Evidence]:
    """The evidence naming the schedule and its expected share of a step (v stages per rank: interleaved). Where the
    step runs waves of fewer microbatches (sagelaunch's SMP with active_microbatches below microbatches), each wave
    fills and drains the pipeline: w waves of m/w cost (p − 1)/(v·m/w + p − 1), the formula at the microbatches per
    fill."""
    per_fill = min(microbatches, microbatches_per_fill or microbatches)
    schedule = ("GPipe/1F1B fill-drain" if virtual_stages == 1
                else f"interleaved, {virtual_stages} stages per rank")
    out: dict[str, Evidence] = {
        "schedule": schedule,
        "expected_bubble_share": round(bubble_share(pipeline_degree, per_fill, virtual_stages), 3),
        "expected_bubble_source": SOURCE,
    }
    if virtual_stages > 1:
        out["virtual_stages"] = virtual_stages
    if per_fill < microbatches:
        out["microbatches_per_fill"] = per_fill
    return out


def beyond_schedule(measured: float, expected: float) -> tuple[str, str]:
    """(a sentence for the summary, a first step for the fix) when the stages wait well beyond the schedule's bubble;
    empty strings when the schedule explains the wait."""
    if expected <= 0 or measured < BEYOND_SCHEDULE_RATIO * expected:
        return "", ""
    return (f" The schedule accounts for {100 * expected:.0f}%: the rest is uneven stages or the time activations "
            "take between them.",
            "First even out the stages' work (SMP \"auto_partition\": true, or move layers with smp.partition) and "
            "send less between them (fewer, larger microbatches when each is tiny); then ")
