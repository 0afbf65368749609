"""The profile browser in real headless Chromium: search, load, dashboard, timeline, unload."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

CHARTS = ["gpu-active", "gpu-util", "cpu-active", "cpu-util", "kernel-time-all", "kernel-time-top",
          "kernel-count-all", "kernel-count-top", "step-time", "precision", "gpu-activity", "memory-ops", "annotation"]


def job_rows(page) -> list[str]:
    return page.locator("#jobs-table tbody td.job-name").all_inner_texts()


def search(page, **fields) -> list[str]:
    """Set the search fields, wait for the table to answer, return the job names shown."""
    page.evaluate("() => { window.__tableVersion = 0; new MutationObserver(() => window.__tableVersion++)"
                  ".observe(document.querySelector('#jobs-table tbody'), {childList: true}); }")
    for sel, value in fields.items():
        el = page.locator(f"#search-{sel}")
        if sel == "status":
            el.select_option(value)
        else:
            el.fill(value)
    page.wait_for_function("() => window.__tableVersion > 0")
    return job_rows(page)


def open_ui(page, server) -> None:
    page.goto(server.url)
    page.wait_for_selector("#jobs-table tbody td.job-name")


def load_job(page, name: str) -> None:
    """Load from the job list; the progress indicator must show while it loads."""
    search(page, name=name)
    page.evaluate("() => { window.__progressSeen = false; const p = document.getElementById('progress');"
                  " new MutationObserver(() => { if (!p.hidden) window.__progressSeen = true; })"
                  ".observe(p, {attributes: true}); }")
    page.click(f'button.load[data-job="{name}"]')
    page.wait_for_selector('body[data-state="loaded"]', timeout=60_000)
    assert page.evaluate("window.__progressSeen"), "the progress bar showed during the load"


def test_search_load_dashboard_and_unload(page, ui_server, artifacts_dir):
    open_ui(page, ui_server)
    assert {"profui-resnet-v100", "profui-cpu-only", "profui-two-hosts"} <= set(job_rows(page))
    assert search(page, name="V100") == ["profui-resnet-v100"]
    assert search(page, name="", status="Failed") == ["profui-cpu-only"]
    assert search(page, status="", after="2026-03-04") == ["profui-escape", "profui-no-profile"]
    assert search(page, after="", before="2026-03-01") == ["profui-resnet-v100"]
    search(page, before="")
    page.screenshot(path=str(artifacts_dir / "profile-ui-jobs.png"))

    load_job(page, "profui-resnet-v100")
    page.wait_for_selector('#dashboard[data-ready="1"]', timeout=60_000)
    assert page.evaluate("location.hash") == "#/dashboard"
    assert page.inner_text("#loaded-name") == "profui-resnet-v100"
    for chart in CHARTS:  # every chart present and drawn (this job has counters, kernels, steps, annotations)
        el = page.locator(f"#chart-{chart}")
        assert el.get_attribute("data-rendered") == "1", chart
        assert el.locator(".main-svg").count() >= 1, chart
    assert "algo-1 (mean of 1 GPU)" in page.inner_text("#chart-gpu-util")  # per node

    page.fill("#db-k", "5")
    page.wait_for_function("document.getElementById('chart-kernel-time-top').data[0].y.length === 5")
    assert page.evaluate("document.getElementById('chart-kernel-count-all').data[0].labels.length") == 6  # 5 + other
    assert page.evaluate("document.getElementById('chart-ann').data.length") >= 3  # several histograms side by side
    page.screenshot(path=str(artifacts_dir / "profile-ui-dashboard.png"), full_page=True)

    # one profile at a time: loading another is refused until the trash icon unloads this one
    page.goto(ui_server.url + "#/jobs")
    search(page, name="cpu-only")
    page.click('button.load[data-job="profui-cpu-only"]')
    page.wait_for_selector("#notice:not([hidden])")
    assert "unload it" in page.inner_text("#notice")
    page.click("#unload")
    page.wait_for_selector('body[data-state="empty"]')
    page.click('button.load[data-job="profui-cpu-only"]')
    page.wait_for_selector('body[data-state="loaded"]', timeout=60_000)
    page.wait_for_selector('#dashboard[data-ready="1"]')
    assert "CPU-only profile" in page.inner_text("#db-banner")  # said once, GPU cards hidden
    for chart in ("gpu-active", "gpu-util", "kernel-time-top", "precision", "memory-ops"):
        assert page.locator(f"#chart-{chart}").count() == 0, chart
    assert "system monitor did not record" in page.inner_text("#chart-cpu-util")
    page.screenshot(path=str(artifacts_dir / "profile-ui-dashboard-cpu-only.png"), full_page=True)
    page.click("#unload")
    page.wait_for_selector('body[data-state="empty"]')
    assert page.console_errors == []


def test_timeline_zoom_to_step_and_select_a_kernel(page, ui_server, artifacts_dir):
    open_ui(page, ui_server)
    load_job(page, "profui-resnet-v100")
    page.goto(ui_server.url + "#/timeline")
    page.wait_for_function("window.app.timeline && window.app.timeline.lastFrameMs >= 0")
    tree = page.evaluate("window.app.tlData.tree")
    host = tree[0]
    assert host["label"] == "algo-1" and [c["label"] for c in host["children"]] == ["CPU", "GPUs"]
    gpu = host["children"][1]["children"][0]
    assert gpu["label"] == "GPU 0 (rank 0)"
    assert [c["label"] for c in gpu["children"]][:2] == ["host", "utilisation %"] and "stream 7" in [c["label"] for c in gpu["children"]]
    assert "CPU utilisation %" in [c["label"] for c in host["children"][0]["children"]]

    page.fill(".tl-step-input", "ProfilerStep#103")
    page.press(".tl-step-input", "Enter")
    view = page.evaluate("[window.app.timeline.view.t0, window.app.timeline.view.t1]")
    step = page.evaluate("window.app.tlData.steps.find(s => s.name === 'ProfilerStep#103')")
    assert view[0] < step["start"] < view[1] and view[0] < step["end"] < view[1]
    assert (view[1] - view[0]) < 1.1 * (step["end"] - step["start"])

    # a kernel in this step with its launch; zoom so that it is wide enough to click
    kernel = page.evaluate("""() => { const t = window.app.timeline, s = t.steps.find(s => s.name === 'ProfilerStep#103');
        const k = t.find((n, c, i) => c === 'kernel' && t.link[i] >= 0 && t.start[i] > s.start + 1000 && t.dur[i] > 20, 1)[0];
        t.zoomTo(t.start[k] - t.dur[k], t.start[k] + 3 * t.dur[k]); t.draw(); return k; }""")
    x, y = page.evaluate(f"window.app.timeline.screenPos({kernel})")
    box = page.locator("canvas.tl-canvas").bounding_box()
    page.mouse.click(box["x"] + x + 4, box["y"] + y)
    page.wait_for_function(f"window.app.timeline.selected === {kernel}")
    assert page.inner_text(".tl-f-category") == "kernel"
    assert page.inner_text(".tl-f-rank") == "0" and int(page.inner_text(".tl-f-correlation")) > 0
    launch_link = page.locator('a.tl-conn[data-rel="launched by"]')
    assert "cudaLaunchKernel" in launch_link.inner_text()
    page.screenshot(path=str(artifacts_dir / "profile-ui-timeline-kernel.png"))
    launch_link.click()
    page.wait_for_function(f"window.app.timeline.selected === window.app.timeline.link[{kernel}]")
    assert page.inner_text(".tl-f-category") == "cuda_runtime"
    assert page.locator('a.tl-conn[data-rel="launches"]').count() == 1
    page.screenshot(path=str(artifacts_dir / "profile-ui-timeline-launch.png"))

    # pan and zoom with keys, mouse wheel and drag
    span = lambda: page.evaluate("window.app.timeline.view.t1 - window.app.timeline.view.t0")  # noqa: E731
    t0 = lambda: page.evaluate("window.app.timeline.view.t0")  # noqa: E731
    page.click(".tl-step-prev")
    assert page.evaluate("window.app.timeline.root.dataset.step") == "ProfilerStep#102"
    before = span()
    page.locator("canvas.tl-canvas").focus()
    page.keyboard.press("w")
    assert span() == pytest.approx(before * 0.8, rel=1e-6)
    start = t0()
    page.keyboard.press("d")
    assert t0() > start
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 100)
    before = span()
    page.mouse.wheel(0, 400)
    page.wait_for_function(f"window.app.timeline.view.t1 - window.app.timeline.view.t0 > {before}")
    start = t0()
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2 - 200, box["y"] + 100, steps=4)
    page.mouse.up()
    assert t0() > start
    page.keyboard.press("0")
    assert page.evaluate("window.app.timeline.view.t0") == 0
    # level of detail at full zoom-out: no event is lost (every sampled event's pixel is painted), the frame
    # reads pre-summed levels instead of every event and sets a handful of fill styles, and a click on a
    # sub-pixel event still selects an event under the cursor, in its lane
    lod = page.evaluate("""() => { const t = window.app.timeline, G = SageTimeline.util.GUTTER, L = SageTimeline.util.LANE_H;
        t.draw();
        const v = t.view, scale = (t.w - G) / (v.t1 - v.t0), H = t.h, dpr = window.devicePixelRatio || 1;
        const img = t.ctx.getImageData(0, 0, t.canvas.width, t.canvas.height).data;
        let checked = 0, blank = [], sub = -1;
        for (let i = 0; i < t.n; i += 37) {
            const row = t.rowOfTrack.get(t.track[i]); if (!row || t.laneOf[i] < 0) continue;
            const y = row.y - t.scrollY + 2 + t.laneOf[i] * L + L / 2; if (y < 30 || y > H - 2) continue;
            const x0 = G + (t.start[i] - v.t0) * scale, wide = t.dur[i] * scale >= 1;
            const x = Math.min(t.w - 1, wide ? Math.floor(Math.max(G, x0) + 0.5) : G + Math.max(0, Math.floor(x0 - G)));
            const p = (Math.floor(y * dpr) * t.canvas.width + Math.floor(x * dpr)) * 4;
            checked++;
            if (img[p] === 255 && img[p + 1] === 255 && img[p + 2] === 255) blank.push(i);
            if (!wide && sub < 0 && t.cats[t.cat[i]] === 'kernel' && x > G + 50) sub = i;
        }
        return {checked: checked, blank: blank, stats: Object.assign({}, t.stats), palette: t.palette.length, sub: sub}; }""")
    assert lod["checked"] > 300 and lod["blank"] == [], lod
    assert lod["stats"]["levelLanes"] >= 1 and lod["stats"]["events"] < page.evaluate("window.app.timeline.n") / 2, lod
    assert lod["stats"]["styles"] <= lod["palette"] and lod["stats"]["styles"] <= 64, lod
    assert lod["sub"] >= 0
    sx, sy = page.evaluate(f"window.app.timeline.screenPos({lod['sub']})")
    page.mouse.click(box["x"] + sx, box["y"] + sy)
    page.wait_for_function("window.app.timeline.selected >= 0")
    hit = page.evaluate(f"""() => {{ const t = window.app.timeline, k = {lod['sub']}, i = t.selected;
        return {{sameLane: t.track[i] === t.track[k] && t.laneOf[i] === t.laneOf[k],
                 near: t.start[i] <= t.tOf({sx} + 3) && t.start[i] + t.dur[i] >= t.tOf({sx} - 3)}}; }}""")
    assert hit == {"sameLane": True, "near": True}
    page.keyboard.press("Escape")
    # the tree folds: clicking a group's label in the gutter hides its tracks
    rows = lambda: page.evaluate("window.app.timeline.rowsCache.length")  # noqa: E731
    before = rows()
    cores_y = page.evaluate("(() => { const r = window.app.timeline.rowsCache.find(r => r.node.label === 'cores');"
                            " return r.y - window.app.timeline.scrollY + 5; })()")
    page.mouse.click(box["x"] + 40, box["y"] + cores_y)
    page.wait_for_function(f"window.app.timeline.rowsCache.length === {before - 4}")  # core 0..3 folded away
    page.screenshot(path=str(artifacts_dir / "profile-ui-timeline-all.png"))
    page.click("#unload")
    page.wait_for_selector('body[data-state="empty"]')
    assert page.console_errors == []
