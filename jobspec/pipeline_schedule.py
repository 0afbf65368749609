"""A pipeline schedule's bubble: the share of a step each stage idles while the pipeline fills and drains.

Narayanan et al. 2021 (arXiv 2104.04473), §2.2.1: GPipe's and 1F1B's (PipeDream-Flush) bubble is (p − 1)·(t_f + t_b)
against an ideal m·(t_f + t_b), a fraction (p − 1)/m of the ideal time; §2.2.2: with v model chunks per device (the
interleaved schedule) each chunk's passes take 1/v of the time, and the fraction is (1/v)·(p − 1)/m. As a share of
the whole step (ideal + bubble) that is (p − 1)/(v·m + p − 1), and (p − 1)/(m + p − 1) for v = 1 (GPipe's own
figure, Huang et al. 2019). The planner predicts with it; the profiler's pipeline_bubble finding measures against it.
"""

from __future__ import annotations

from sagelaunch.jobspec.errors import SagelaunchError


def bubble_share(pipeline_degree: int, microbatches: int, virtual_stages: int = 1) -> float:
    """The share of a step each stage spends in the bubble: (p − 1)/(v·m + p − 1); 0 without a pipeline."""
    p, m, v = pipeline_degree, microbatches, virtual_stages
    if p <= 1:
        return 0.0
    if m < 1 or v < 1:
        field, value = ("microbatches", m) if m < 1 else ("virtual_stages", v)
        raise SagelaunchError(f"{field}={value}: a pipeline runs at least 1; give the job's own setting",
                              field=field, value=value, allowed="a whole number ≥ 1", fix="give the job's own setting")
    return (p - 1) / (v * m + p - 1)
