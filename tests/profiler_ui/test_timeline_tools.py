"""The timeline's tools in real headless Chromium: a 6 µs gap 1.2 s into a trace reads and measures as 6 µs, the
ruler's ticks stay distinct at µs zoom, the slowest step is one click away and the advertised [ / ] keys step."""

from __future__ import annotations

import pytest

from tests.profiler import synthetic as syn
from tests.profiler_ui.test_views_browser import cli, open_page

pytestmark = [pytest.mark.browser, pytest.mark.slow]
GAP_AT_NS = 1_203_000_000  # 1.203 s after the trace starts


@pytest.fixture(scope="module")
def page_with_a_gap(tmp_path_factory):
    """12 steps of 100 ms (step 9 takes 400 ms) and, on a stream of its own, two kernels 6 µs apart at 1.203 s."""
    root = tmp_path_factory.mktemp("gap")
    rank = syn.healthy(steps=12, step_ms=100, slow={9: 400}, kernel_us=20_000)
    rank.kernel("kernel_before_the_gap", syn.T0 + GAP_AT_NS, 50_000, stream=21)
    rank.kernel("kernel_after_the_gap", syn.T0 + GAP_AT_NS + 56_000, 30_000, stream=21)
    syn.write(root / "profile", rank)
    out = root / "timeline.html"
    assert "wrote" in cli("timeline", str(root / "profile"), "-o", str(out))
    return out


def test_a_6_us_gap_late_in_a_trace_reads_and_measures_as_6_us(page, page_with_a_gap, artifacts_dir):
    open_page(page, page_with_a_gap)
    t = "window.timeline"
    a, b = page.evaluate(f"[{t}.find((n) => n === 'kernel_before_the_gap')[0], {t}.find((n) => n === 'kernel_after_the_gap')[0]]")
    # times relative to the trace's start (the first launch, 20 µs before T0), to the µs
    info = page.evaluate(f"[{t}.eventInfo({a}), {t}.eventInfo({b})]")
    assert info[0]["end"] == "1.203070 s" and info[1]["start"] == "1.203076 s"
    end_a, start_b = page.evaluate(f"[{t}.start[{a}] + {t}.dur[{a}], {t}.start[{b}]]")
    page.evaluate(f"{t}.zoomTo({end_a} - 14, {start_b} + 14); {t}.draw()")
    # the ruler at this zoom: ticks a few µs apart, each label different
    ticks = page.evaluate(f"""() => {{ const t = {t}, out = []; const orig = t.ctx.fillText.bind(t.ctx);
        t.ctx.fillText = (s, x, y) => {{ if (y === 8) out.push(s); return orig(s, x, y); }}; t.draw(); t.ctx.fillText = orig; return out; }}""")
    assert len(ticks) >= 4 and len(set(ticks)) == len(ticks) and all(s.endswith(" s") for s in ticks), ticks
    assert any(s.startswith("1.20307") for s in ticks), ticks
    # shift + drag from just inside A's end to just inside B's start: the edges snap, the readout says 6 µs
    box = page.locator("canvas.tl-canvas").bounding_box()
    xa, xb, y = page.evaluate(f"[{t}.xOf({end_a}) - 2, {t}.xOf({start_b}) + 2, {t}.screenPos({a})[1]]")
    page.keyboard.down("Shift")
    page.mouse.move(box["x"] + xa, box["y"] + y)
    page.mouse.down()
    page.mouse.move(box["x"] + (xa + xb) / 2, box["y"] + y, steps=3)
    page.mouse.move(box["x"] + xb, box["y"] + y, steps=3)
    page.mouse.up()
    page.keyboard.up("Shift")
    assert page.inner_text(".tl-measure").startswith("Δ 6.000 µs"), page.inner_text(".tl-measure")
    assert page.evaluate(f"{t}.measured.t1 - {t}.measured.t0") == pytest.approx(6.0, abs=1e-6)
    page.screenshot(path=str(artifacts_dir / "timeline-measure-6us.png"))
    page.focus("canvas.tl-canvas")
    page.keyboard.press("Escape")
    assert page.evaluate(f"{t}.measured") is None


def test_slowest_step_in_one_click_and_the_bracket_keys(page, page_with_a_gap):
    open_page(page, page_with_a_gap)
    t = "window.timeline"
    page.click(".tl-step-slowest")
    assert page.evaluate(f"{t}.root.dataset.step") == "step_9"
    view, step = page.evaluate(f"[[{t}.view.t0, {t}.view.t1], {t}.steps[{t}.currentStep]]")
    assert view[0] <= step["start"] < step["end"] <= view[1]
    page.focus("canvas.tl-canvas")
    page.keyboard.press("]")
    assert page.evaluate(f"{t}.root.dataset.step") == "step_10"
    page.keyboard.press("[")
    page.keyboard.press("[")
    assert page.evaluate(f"{t}.root.dataset.step") == "step_8"


def test_the_process_memory_is_a_chart_scaled_to_its_own_peak(page, tmp_path):
    """The leak of the labelled set: its RSS samples are a counter track (MiB, scaled to the peak), not slices."""
    from tests.profiler.conftest import REPO

    out = tmp_path / "leak.html"
    assert "wrote" in cli("timeline", str(REPO / "tests" / "data" / "profiler" / "findings_set" / "leak"), "-o", str(out))
    open_page(page, out)
    t = "window.timeline"
    counter = page.evaluate(f"""() => {{ const t = {t}; const c = t.counters.find((c) => t.tracks[c.track].label === "rank 0 process rss");
        return c && {{unit: c.unit, max: c.max, label: c.label, first: c.v[0], last: c.v[c.v.length - 1], n: c.v.length}}; }}""")
    assert counter and counter["unit"] == " MiB" and counter["n"] >= 100
    assert counter["last"] > 1.5 * counter["first"] and counter["max"] == pytest.approx(counter["last"], rel=0.05)
    assert counter["label"] == f"max {counter['max']} MiB"
    assert page.evaluate(f"{t}.find((n, c) => c === 'memory_sample').length") == 0  # no slice per sample


def test_a_step_of_every_rank_side_by_side(page, tmp_path):
    """The labelled DDP job with a slow DataLoader on rank 1: going to a step shows that step on both ranks, and the
    step's label gives each rank's own time."""
    from tests.profiler.conftest import REPO

    out = tmp_path / "ddp.html"
    job = REPO / "tests" / "data" / "profiler" / "findings_set" / "ddp_input_straggler"
    assert "wrote" in cli("timeline", str(job), "-o", str(out))
    open_page(page, out)
    t = "window.timeline"
    page.fill(".tl-step-input", "step_50")
    page.press(".tl-step-input", "Enter")
    step, view = page.evaluate(f"[{t}.steps[{t}.currentStep], [{t}.view.t0, {t}.view.t1]]")
    assert [w["rank"] for w in step["ranks"]] == [0, 1]
    for w in step["ranks"]:  # each rank's own step_50 lies inside the view
        assert view[0] <= w["start"] < w["end"] <= view[1]
    label = page.inner_text(".tl-step-label")
    assert "rank 0 " in label and "rank 1 " in label and label.startswith("50 of 100")


def test_a_loop_without_annotations_has_steps_and_its_slowest_is_the_finding_s(page, tmp_path):
    """The labelled job with a checkpoint every 50 steps has no step annotation: the timeline's steps are the
    optimizer steps the analysis finds, and one click goes to the step step_outlier names."""
    from sagelaunch.profiler.analysis import analyze
    from tests.profiler.conftest import REPO

    job = REPO / "tests" / "data" / "profiler" / "findings_set" / "checkpoint_every_50"
    outlier = next(f for f in analyze(job).findings if f.rule == "step_outlier")
    out = tmp_path / "plain.html"
    assert "wrote" in cli("timeline", str(job), "-o", str(out))
    open_page(page, out)
    t = "window.timeline"
    assert page.evaluate(f"{t}.steps.length") == 199  # 200 optimizer steps; the first has no known start
    page.click(".tl-step-slowest")
    step, view = page.evaluate(f"[{t}.steps[{t}.currentStep], [{t}.view.t0, {t}.view.t1]]")
    assert step["number"] == outlier.evidence["slowest_step"] and step["name"].startswith("optimizer step ")
    assert view[0] <= step["start"] < step["end"] <= view[1]
