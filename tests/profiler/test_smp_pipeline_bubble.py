"""sagelaunch's own SMP pipeline, profiled: its blocking receives are the bubble, measured against the schedule.

modelparallel marks each stage's waits for its peer stage (the schedule's receives, the step's output exchange) as
pipeline_wait spans through jobspec.library_marks, and notes the degree, microbatches and stages per rank it ran; the
profiler records both and pipeline_bubble sets the measured share against (p − 1)/(v·m + p − 1)
(jobspec/pipeline_schedule.py, Narayanan et al. 2021 §2.2). The stored runs are in the labelled set
(test_findings_scored.py); here a fresh one runs under torchrun.
"""

from __future__ import annotations

import pytest

from sagelaunch.jobspec import library_marks
from sagelaunch.jobspec.pipeline_schedule import bubble_share
from sagelaunch.profiler import job_settings


def test_the_schedules_expected_bubble():
    assert bubble_share(2, 1) == 0.5 and bubble_share(2, 2) == pytest.approx(1 / 3)
    assert bubble_share(2, 4) == pytest.approx(0.2)
    # interleaved: v stages per rank cut the bubble fraction of the ideal time to (1/v)(p − 1)/m (§2.2.2)
    assert bubble_share(2, 2, 2) == pytest.approx(0.2) and bubble_share(4, 8, 2) == pytest.approx(3 / 19)
    share = bubble_share(8, 32, 2)
    assert share / (1 - share) == pytest.approx((1 / 2) * (8 - 1) / 32)  # as a fraction of the ideal time
    assert bubble_share(1, 4) == 0.0


def test_what_the_libraries_note_is_recorded_beside_the_smp_parameters(monkeypatch):
    monkeypatch.setattr(library_marks, "_settings", {})
    env = {"SM_HP_MP_PARAMETERS": '{"pipeline_parallel_degree": 2, "microbatches": 4}'}
    assert job_settings.from_environment(env) == {"pipeline_parallel_degree": 2, "microbatches": 4}
    library_marks.note_setting(library_marks.VIRTUAL_STAGES, 2)
    library_marks.note_setting("microbatches", 8)  # what ran (smp.init(config=...)) wins over the variable
    assert job_settings.from_environment(env) == {"pipeline_parallel_degree": 2, "microbatches": 8,
                                                   "virtual_stages": 2}
    assert job_settings.from_environment({"SM_HP_MP_PARAMETERS": "not json"}) == {"microbatches": 8,
                                                                                  "virtual_stages": 2}


def test_a_span_without_a_profiler_runs_its_block(monkeypatch):
    monkeypatch.setattr(library_marks, "_annotator", None)
    ran = []
    with library_marks.span(library_marks.PIPELINE_WAIT):
        ran.append(1)
    assert ran == [1]


@pytest.mark.slow  # torchrun, two SMP stages over gloo
@pytest.mark.timeout(300)
def test_a_fresh_smp_pipeline_run_measures_its_bubble(tmp_path):
    """pp=2, 2 microbatches, GPipe, stages of fixed time: each stage's measured wait is within ±25 % of 1/3 of its
    step, and the finding names the schedule, the expected share and its source."""
    from scripts.make_findings_set import run_case

    from sagelaunch.profiler.analysis import analyze

    run_case("smp_fixed_mb2", tmp_path)
    result = analyze(tmp_path / "smp_fixed_mb2")
    ctx = result.context
    assert (ctx.pipeline_parallel_degree, ctx.microbatches, ctx.virtual_stages, ctx.microbatches_per_fill) == (2, 2, 1, 2)
    expected = bubble_share(ctx.pipeline_parallel_degree, ctx.microbatches, ctx.virtual_stages)
    for rank, r in result.ranks.items():
        assert r.loop is not None and r.loop.mean_us.pipeline_wait is not None, rank
        assert r.loop.pipeline_waits_per_step == 3, rank  # a receive per microbatch, and the step's output exchange
        assert abs(r.loop.mean_us.pipeline_wait / r.loop.mean_us.cycle / expected - 1) <= 0.25, rank
    (found,) = [f for f in result.findings if f.rule == "pipeline_bubble"]
    assert found.evidence["schedule"] == "GPipe/1F1B fill-drain"
    assert found.evidence["expected_bubble_share"] == pytest.approx(expected, abs=1e-3)
    assert "2104.04473" in str(found.evidence["expected_bubble_source"])


SPANS = r'''
import json, sys
import sagelaunch.profiler as smprof
from sagelaunch.jobspec import library_marks
from sagelaunch.profiler.api import SMProfiler
smprof.configure(smprof.Config(output_dir=sys.argv[1]))
smprof.start_profiling()
prof = SMProfiler.instance()
for _ in range(3):  # a library's span outside the script's steps: recorded, never a step
    with library_marks.span(library_marks.PIPELINE_WAIT):
        pass
with smprof.annotate("step_1"):
    with library_marks.span(library_marks.PIPELINE_WAIT):
        pass
steps = prof._step
smprof.stop_profiling()
print(json.dumps({"steps": steps}))
'''


@pytest.mark.slow  # the profiler's output process
def test_a_library_span_is_recorded_and_never_counted_as_a_step(tmp_path):
    from sagelaunch.profiler.loader import load_profile
    from tests.profiler.conftest import run_profiled_script

    _, out = run_profiled_script(SPANS, tmp_path / "out", env={"RANK": "0"})
    assert out["steps"] == 1  # the duty cycle and SMPFileRotationSteps count the script's steps only
    (rank,) = load_profile(tmp_path / "out").ranks.values()
    names = [rank.names[i] for i in rank["name_id"]]
    assert names.count("pipeline_wait") == 4 and names.count("step_1") == 1
