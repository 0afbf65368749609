"""The views people work with, in real headless Chromium: a 5,000-step timeline at 1280×720 (step navigator,
search, annotation list, legend, launch arrow and its edge marker), pies of kernels sharing long prefixes,
findings and key figures, the CPU-only banner, per-node GPU utilisation, and `profile ui PATH`."""

from __future__ import annotations

import re
import shutil

import pytest
from typer.testing import CliRunner

from sagelaunch.profiler.cli import profile_app
from tests.profiler import synthetic as syn
from tests.profiler_ui.conftest import trace

pytestmark = [pytest.mark.browser, pytest.mark.slow]
runner = CliRunner()
SIZES = ((1280, 720), (1400, 900))


def cli(*args: str) -> str:
    result = runner.invoke(profile_app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def many_steps(tmp_path_factory):
    """A 5,000-step profile (2 ms steps, three kernels each) as our artifact, and its offline timeline page."""
    root = tmp_path_factory.mktemp("many-steps")
    syn.write(root / "profile", syn.healthy(steps=5000, step_ms=2, kernel_us=600))
    out = root / "timeline.html"
    assert "wrote" in cli("timeline", str(root / "profile"), "-o", str(out))
    return out


def open_page(page, path, size=(1280, 720)):
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto(path.as_uri())
    page.wait_for_selector('[data-ready="1"]', timeout=60_000)


def test_timeline_with_5000_steps_at_1280x720(page, many_steps, artifacts_dir):
    open_page(page, many_steps)
    html = many_steps.read_text()
    assert "<script src=" not in html and "<link " not in html  # self-contained
    t = "window.timeline"
    # the canvas keeps most of the window; the step navigator is one line, never a wall of buttons
    canvas = page.locator("canvas.tl-canvas").bounding_box()
    assert canvas["height"] >= 0.8 * 720 and canvas["width"] >= 0.7 * 1280, canvas
    assert page.locator(".tl-bar").bounding_box()["height"] <= 40
    assert page.locator(".tl-stepnav button").count() == 3 and page.locator(".tl-step").count() == 0
    assert page.get_attribute(".tl-step-slider", "max") == "4999"
    # a step by name (as its bar says) and by number; the chosen one is shown and highlighted
    page.fill(".tl-step-input", "step_4321")
    page.press(".tl-step-input", "Enter")
    assert page.evaluate(f"{t}.root.dataset.step") == "step_4321"
    assert page.inner_text(".tl-step-label").startswith("4,321 of 5,000")
    view, step = page.evaluate(f"[[{t}.view.t0, {t}.view.t1], {t}.steps[{t}.currentStep]]")
    assert step["name"] == "step_4321" and view[0] < step["start"] < step["end"] < view[1]
    band = page.evaluate(f"""() => {{ const t = {t}; t.draw(); const x = Math.round(t.xOf((t.steps[t.currentStep].start + t.steps[t.currentStep].end) / 2));
        const d = t.ctx.getImageData(x * (window.devicePixelRatio || 1), (t.h - 5) * (window.devicePixelRatio || 1), 1, 1).data; return [d[0], d[1], d[2]]; }}""")
    assert band[2] > band[1]  # the step's tint (lavender) at the bottom of the canvas, where no track is
    page.fill(".tl-step-input", "17")
    page.press(".tl-step-input", "Enter")
    assert page.evaluate(f"{t}.root.dataset.step") == "step_17"
    page.click(".tl-step-next")
    assert page.evaluate(f"{t}.root.dataset.step") == "step_18"
    page.screenshot(path=str(artifacts_dir / "timeline-5000-steps-1280x720.png"))

    # search over names: results with counts, Enter jumps to the first match and highlights every match in view
    page.fill(".tl-search-input", "gemm")
    page.wait_for_selector(".tl-results:not([hidden]) .tl-result")
    assert "15,000×" in page.inner_text(".tl-results")
    page.press(".tl-search-input", "Enter")
    assert page.inner_text(".tl-search-count").endswith("of 15,000")
    sel = page.evaluate(f"{t}.names[{t}.name[{t}.selected]]")
    assert "gemm" in sel and page.inner_text(".tl-f-name") == sel
    page.click(".tl-search-next")
    assert page.evaluate(f"{t}.matchesDrawn") >= 1
    page.screenshot(path=str(artifacts_dir / "timeline-search-1280x720.png"))

    # the selected kernel's launch is off screen: a cyan marker on the edge; clicking it jumps to the launch
    k = page.evaluate(f"""() => {{ const t = {t}, k = t.selected; t.zoomTo(t.start[k] + 50, t.start[k] + 400); t.draw();
        return k; }}""")
    marker = page.evaluate(f"{t}.edgeMarker")
    assert marker and marker["index"] == page.evaluate(f"{t}.link[{k}]")
    px = page.evaluate(f"""() => {{ const t = {t}, m = t.edgeMarker, dpr = window.devicePixelRatio || 1;
        const d = t.ctx.getImageData(Math.round((m.x0 + 2) * dpr), Math.round((m.y0 + 2) * dpr), 1, 1).data; return [d[0], d[1], d[2]]; }}""")
    assert px == [0, 184, 217]  # the post's cyan
    box = page.locator("canvas.tl-canvas").bounding_box()
    page.mouse.click(box["x"] + (marker["x0"] + marker["x1"]) / 2, box["y"] + (marker["y0"] + marker["y1"]) / 2)
    page.wait_for_function(f"{t}.selected === {marker['index']}")
    assert page.evaluate(f"{t}.view.t0 <= {t}.start[{marker['index']}] && {t}.start[{marker['index']}] <= {t}.view.t1")
    assert page.inner_text(".tl-f-category") == "cuda_runtime"

    # the annotation list with counts (steps summarised), and the colour legend
    page.click('.tl-tabs button[data-tab="ann"]')
    rows = dict(re.findall(r"^(\w+)\s+([\d,]+)$", page.inner_text(".tl-ann-list"), re.M))
    assert rows == {"Forward": "5,000", "Backward": "5,000", "Optimizer": "5,000"}
    assert "5,000 step annotations" in page.inner_text(".tl-ann-list")
    page.click('.tl-ann-list li[data-name] a >> text=Backward')
    assert page.inner_text(".tl-search-count").endswith("of 5,000")
    page.click('.tl-tabs button[data-tab="legend"]')
    legend = page.inner_text(".tl-legend")
    for entry in ("GPU kernel", "kernel launch", "annotation (CPU side)", "launch → kernel", "search match"):
        assert entry in legend, entry
    page.screenshot(path=str(artifacts_dir / "timeline-legend-1280x720.png"))
    # the selection panel fits: nothing wider than the panel
    page.click('.tl-tabs button[data-tab="sel"]')
    assert page.evaluate("(() => { const p = document.querySelector('.tl-panel'); return p.scrollWidth <= p.clientWidth + 1; })()")
    assert page.console_errors == []


LONG = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, at::native::binary_internal::"


def test_pies_keep_kernels_with_long_common_prefixes_apart(page, tmp_path, artifacts_dir):
    r = syn.Rank()
    ops = ["MulFunctor<float>", "DivFunctor<float>", "AddFunctor<float>", "SubFunctor<float>", "MaxFunctor<float>",
           "MinFunctor<float>", "PowFunctor<float>", "AtanFunctor<float>"]
    t = syn.T0
    for i, op in enumerate(ops):
        for _ in range(10 + i):
            r.kernel(f"{LONG}{op}>, at::detail::Array<char*, 3> >(int, at::native::BinaryFunctor<float>, at::detail::Array<char*, 3>)", t, 100_000 + 9_000 * i)
            t += 200_000
    syn.write(tmp_path / "p", r)
    cli("report", str(tmp_path / "p"), "-o", str(tmp_path / "r.html"))
    open_page(page, tmp_path / "r.html", (1400, 900))
    pie = page.evaluate("document.getElementById('chart-kernel-time-all').data[0]")
    assert len(pie["ids"]) == len(set(pie["ids"])) == 8 and all(i.startswith(LONG) for i in pie["ids"])  # keyed by full name
    assert len(set(pie["labels"])) == 8 and all(len(lbl) <= 60 for lbl in pie["labels"])  # short, still distinct
    assert any("Atan" in lbl for lbl in pie["labels"])
    legend = page.locator("#chart-kernel-time-all .legend .traces").count()
    assert legend == 8
    bars = page.evaluate("document.getElementById('chart-kernel-time-top').data[0].y")
    assert len(set(bars)) == 8
    # hover a slice: its full name, inside the card
    page.locator("#chart-kernel-time-all .slice path").first.hover()
    page.wait_for_function("document.getElementById('fullname-kernel-time-all').classList.contains('db-active')")
    full = page.inner_text("#fullname-kernel-time-all .db-fn")
    assert full in pie["ids"] and "launches" in page.inner_text("#fullname-kernel-time-all .db-fn-figs")
    inside = page.evaluate("""(() => { const c = document.querySelector('[data-chart="kernel-time-all"]').getBoundingClientRect(),
        b = document.getElementById('fullname-kernel-time-all').getBoundingClientRect();
        return b.left >= c.left && b.right <= c.right && b.bottom <= c.bottom; })()""")
    assert inside
    page.screenshot(path=str(artifacts_dir / "report-long-kernel-names-1400x900.png"), full_page=True)
    assert page.console_errors == []


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_findings_and_figures_in_the_report(page, tmp_path, artifacts_dir, size):
    src = trace("sampled_rank0.pt.trace.json.gz")
    cli("report", str(src), "-o", str(tmp_path / "r.html"))
    from tests.profiler.conftest import analysis_json

    doc = analysis_json(src)
    open_page(page, tmp_path / "r.html", size)
    card = page.locator('#db-findings .db-finding[data-rule="low_overlap"]')
    # the fix of the collective shown: TorchRec's all-to-all (NCCL SendRecv kernels)
    assert card.is_visible() and "TrainPipelineSparseDist" in card.inner_text()
    assert card.bounding_box()["y"] < size[1]  # findings come first, in the first screen
    figures = page.locator("#db-figures td.db-fig").evaluate_all("els => els.map(e => e.textContent)")
    assert figures == [f["text"] for f in doc["figures"]]  # the same strings the CLI prints
    precision = page.evaluate("document.getElementById('chart-precision').data[0].labels")
    assert precision[0] == "communication"
    page.screenshot(path=str(artifacts_dir / f"report-findings-{size[0]}x{size[1]}.png"))
    assert page.console_errors == []


def test_ui_opens_a_given_trace_folder_with_per_node_utilisation(page, tmp_path, artifacts_dir):
    from sagelaunch.profiler.ui.server import ProfileBrowser

    folder = tmp_path / "two-ranks"
    folder.mkdir()
    for name in ("sampled_rank0.pt.trace.json.gz", "sampled_rank1.pt.trace.json.gz"):
        shutil.copy(trace(name), folder / name)
    server = ProfileBrowser(0, include_sagemaker=False)
    server.open_path(folder)
    server.start_background()
    try:
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto(server.url)
        page.wait_for_selector('#dashboard[data-ready="1"]', timeout=60_000)
        assert page.evaluate("location.hash") == "#/dashboard" and page.inner_text("#loaded-name") == "two-ranks"
        lines = lambda: page.evaluate("document.getElementById('chart-gpu-util').data.map(d => d.name)")  # noqa: E731
        assert lines() == ["algo-1 (mean of 2 GPUs)"]  # per node
        page.check("#db-per-gpu")
        page.wait_for_function("document.getElementById('chart-gpu-util').data.length === 3")
        assert len([n for n in lines() if "GPU" in n and "rank" in n]) == 2
        assert page.locator('#db-findings .db-finding[data-rule="low_overlap"]').count() == 2  # one per rank
        page.screenshot(path=str(artifacts_dir / "ui-path-dashboard-1400x900.png"), full_page=True)
        page.goto(server.url + "#/timeline")
        page.wait_for_function("window.app.timeline && window.app.timeline.lastFrameMs >= 0")
        page.fill(".tl-search-input", "ncclKernel")
        page.press(".tl-search-input", "Enter")
        assert "nccl" in page.evaluate("window.app.timeline.names[window.app.timeline.name[window.app.timeline.selected]]")
        assert page.inner_text(".tl-step-label").endswith("steps") or "of" in page.inner_text(".tl-step-label")
        page.set_viewport_size({"width": 1280, "height": 720})
        page.screenshot(path=str(artifacts_dir / "ui-path-timeline-1280x720.png"))
        canvas = page.locator("canvas.tl-canvas").bounding_box()
        assert canvas["height"] >= 0.75 * 720, canvas
    finally:
        server.shutdown()
        server.server_close()
    assert page.console_errors == []


def test_ui_lists_the_given_profile_so_it_can_be_opened_again(page, profile_home, artifacts_dir):
    """`profile ui PATH`: the given trace is a row of the job list; after unloading it, its Load button opens it again."""
    from sagelaunch.profiler.ui.server import ProfileBrowser
    from sagelaunch.profile_sources import job_sources

    given = trace("mi250_rocm.pt.trace.json.gz")
    server = ProfileBrowser(0, include_sagemaker=False, job_sources=job_sources())
    server.open_path(given)
    server.start_background()
    try:
        page.goto(server.url)
        page.wait_for_selector('#dashboard[data-ready="1"]', timeout=60_000)
        assert page.inner_text("#loaded-name") == given.name
        page.click("#unload")
        page.wait_for_function("document.body.dataset.state === 'empty'")
        page.click("#nav-jobs")
        row = page.locator(f'#jobs-table tr[data-job="{given.name}"][data-source="path"]')
        row.locator("button.load").wait_for(state="visible", timeout=30_000)  # the list renders after the switch
        assert row.count() == 1
        assert page.locator('#jobs-table tr[data-job="profui-resnet-v100"]').count() == 1  # the jobs are listed too
        page.fill("#search-name", "mi250")  # the search finds it like any job
        page.wait_for_function("document.getElementById('jobs-table').dataset.count === '1'")
        page.screenshot(path=str(artifacts_dir / "ui-given-profile-listed-1400x900.png"))
        page.click(f'#jobs-table button.load[data-job="{given.name}"]')
        page.wait_for_selector('#dashboard[data-ready="1"]', timeout=60_000)
        assert page.evaluate("location.hash") == "#/dashboard" and page.inner_text("#loaded-name") == given.name
        assert server.session.status()["job"]["source"] == "path"
    finally:
        server.shutdown()
        server.server_close()
    assert page.console_errors == []
