"""Benchmark the profiler's views: report generation, dashboard first paint, timeline frame time.

    .venv/bin/python scripts/bench_profiler_views.py [--traces DIR] [--ranks 3] [--chromium /usr/bin/chromium]
    .venv/bin/python scripts/bench_profiler_views.py --quick   # tiny: a 5k-event trace, 1 rank, few frames (CI)

Prints, side by side with the targets of issue 8:
- `sagelaunch profile report` on v100_rank0.pt.trace.json.gz (process start to file written; target <= 3 s), and
  in-process side by side with the dashboard alone (the report before its Timeline tab): time and size;
- for a 100k+-event profile (the V100 trace as N ranks of our artifact): server-side load, dashboard first
  paint (navigation start to every chart drawn; target <= 2 s) and timeline pan/zoom frame time in
  headless Chromium (target <= 50 ms) at full zoom-out, one step and a 2 ms window: the script's time
  and, as frame_raster, the time until Chromium has rasterised the frame; plus the level of detail's
  work at full zoom-out and the timeline payload's size against the same data as a Chrome/Perfetto JSON trace.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def bench_report(trace: Path, out_dir: Path) -> tuple[float, float]:
    """(CLI process seconds, in-process seconds) for the report (dashboard and timeline tabs) of `trace`."""
    out = out_dir / "report.html"
    code = ("import sys; from sagelaunch.profiler.cli import profile_app; "
            f"sys.argv = ['sagelaunch profile', 'report', {str(trace)!r}, '-o', {str(out)!r}]; profile_app()")
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, capture_output=True)
    cli_s = time.perf_counter() - t
    from sagelaunch.profiler.report.html import write_report

    t = time.perf_counter()
    write_report(trace, out_dir / "report2.html")
    return cli_s, time.perf_counter() - t


def bench_report_parts(trace: Path, out_dir: Path, repeats: int = 3) -> dict:
    """Side by side, in-process (median of `repeats`): the report with its Timeline tab against the dashboard alone
    (as the report was before it had the tab), seconds and MB."""
    from sagelaunch.profiler.loader import load_profile
    from sagelaunch.profiler.report.data import dashboard_data
    from sagelaunch.profiler.report.html import render_report, write_report

    def dashboard_only() -> int:
        profile = load_profile(trace)
        html = render_report(dashboard_data(profile, title=str(trace)))
        (out_dir / "dashboard-only.html").write_text(html, encoding="utf-8")
        return len(html.encode())

    times: dict[str, list[float]] = {"with": [], "without": []}
    sizes = {}
    for _ in range(repeats):
        t = time.perf_counter()
        sizes["without"] = dashboard_only()
        times["without"].append(time.perf_counter() - t)
        t = time.perf_counter()
        sizes["with"] = write_report(trace, out_dir / "with-timeline.html").stat().st_size
        times["with"].append(time.perf_counter() - t)
    return {f"{k}_s": statistics.median(v) for k, v in times.items()} | {f"{k}_mb": v / 1e6 for k, v in sizes.items()}


def make_big_job(trace: Path, ranks: int, home: Path) -> tuple[str, int]:
    """A local job whose profile is the trace repeated as `ranks` ranks of our artifact."""
    from sagelaunch.launcher.local import registry
    from sagelaunch.profiler import artifact
    from sagelaunch.profiler.kineto_reader import read_kineto

    name = "bench-100k-events"
    job_dir = registry.job_dir(name)
    total = 0
    for r in range(ranks):
        rank = read_kineto(trace)
        rank.meta.rank, rank.meta.host = r, "algo-1"
        rank.columns["device"][rank.columns["device"] >= 0] = r  # one GPU per rank
        artifact.write_events(rank, job_dir / "algo-1" / "output" / "profiler" / "algo-1" / f"rank-{r}" / "trace-0000.parquet")
        total += len(rank)
    now = datetime.now(timezone.utc)
    registry.create({"TrainingJobName": name, "TrainingJobStatus": "Completed", "CreationTime": now,
                     "LastModifiedTime": now, "JobDir": str(job_dir)})
    return name, total


def bench_browser(name: str, chromium: str, frames_per_zoom: int = 60, first_paints: int = 3, wheel_events: int = 40) -> dict:
    import orjson
    from playwright.sync_api import sync_playwright

    from sagelaunch.profiler.ui.server import ProfileBrowser
    from sagelaunch.profile_sources import job_sources

    server = ProfileBrowser(0, include_sagemaker=False, job_sources=job_sources())
    server.start_background()
    out: dict = {}
    try:
        job = server.catalog.find(name, "local")
        t = time.perf_counter()
        server.session.start_load(job)
        server.session.wait(600)
        out["load_s"] = time.perf_counter() - t
        assert server.session.state == "loaded", server.session.status()
        out["payload_mb"] = len(server.session.timeline_json) / 1e6
        from sagelaunch.profiler.timeline.perfetto import to_chrome_trace  # same data as a Chrome trace, for scale
        from sagelaunch.profiler.loader import load_profile
        from sagelaunch.profiler.timeline.model import build_timeline

        model = build_timeline(load_profile(Path(job.location) / "algo-1" / "output" / "profiler"))
        out["events"] = len(model)
        out["chrome_mb"] = len(orjson.dumps(to_chrome_trace(model))) / 1e6
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(server.url + "#/dashboard")  # warm the cache (plotly.min.js) as a second visit would
            page.wait_for_selector('#dashboard[data-ready="1"]', timeout=120_000)
            paints = []
            for _ in range(first_paints):
                page.goto("about:blank")
                page.goto(server.url + "#/dashboard")
                page.wait_for_selector('#dashboard[data-ready="1"]', timeout=120_000)
                paints.append(page.evaluate("performance.now()") / 1e3)
            out["dashboard_first_paint_s"] = statistics.median(paints)
            page.goto("about:blank")
            page.goto(server.url + "#/timeline")
            page.wait_for_function("window.app && window.app.timeline && window.app.timeline.lastFrameMs >= 0", timeout=120_000)
            out["timeline_ready_s"] = page.evaluate("performance.now()") / 1e3
            # per frame: the script's time (draw) and, with raster, until the canvas is painted (a 1-pixel
            # readback forces Chromium to rasterise the frame's drawing commands, as showing it would)
            frames = page.evaluate("""(n) => { const t = window.app.timeline, ctx = t.ctx; const out = {};
                const run = (key, n) => { out[key] = []; out[key + '_raster'] = [];
                  for (let k = 0; k < n; k++) {
                    if (k % 3 === 0) t.zoomBy(0.85, 600); else if (k % 3 === 1) t.panBy(0.07); else t.zoomBy(1.15, 900);
                    const s = performance.now(); t.draw(); const m = performance.now(); ctx.getImageData(0, 0, 1, 1);
                    out[key].push(m - s); out[key + '_raster'].push(performance.now() - s); } };
                const i = Math.max(0, Math.min(2, t.steps.length - 1));  // the third step, or the last of fewer
                t.zoomTo(0, t.span); run('all', n);
                if (t.steps.length) { t.zoomToStep(i); } run('step', n);
                const s0 = t.steps.length ? t.steps[i].start : 0; t.zoomTo(s0, s0 + 2000); run('deep', n);
                return out; }""", frames_per_zoom)
            out["lod_all"] = page.evaluate("() => { const t = window.app.timeline; t.zoomTo(0, t.span); t.draw();"
                                           " return t.stats ? Object.assign({}, t.stats) : null; }")
            # real frames: wheel events through the browser's event loop, measured by requestAnimationFrame
            page.evaluate("window.app.timeline.zoomTo(0, window.app.timeline.span)")
            box = page.locator("canvas.tl-canvas").bounding_box()
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 200)
            page.evaluate("() => { window.__rafGaps = []; let last = performance.now(); const tick = (t) => {"
                          " window.__rafGaps.push(t - last); last = t; if (window.__rafGaps.length < 10 * %d) requestAnimationFrame(tick); };"
                          " requestAnimationFrame(tick); }" % wheel_events)
            for k in range(wheel_events):
                page.mouse.wheel(0, -120 if k < wheel_events // 2 else 120)
            gaps = page.evaluate("window.__rafGaps.slice(2)")
            browser.close()
        for key, values in frames.items():
            values = sorted(values)
            out[f"frame_{key}_mean_ms"] = statistics.mean(values)
            out[f"frame_{key}_p95_ms"] = values[int(0.95 * (len(values) - 1))]
            out[f"frame_{key}_max_ms"] = values[-1]
        out["raf_gap_p95_ms"] = sorted(gaps)[int(0.95 * (len(gaps) - 1))] if gaps else float("nan")
    finally:
        server.shutdown()
        server.server_close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--traces", type=Path, default=ROOT / "tests" / "data" / "traces")
    ap.add_argument("--ranks", type=int, default=3, help="copies of the V100 trace (45k events each)")
    ap.add_argument("--chromium", default=os.environ.get("SAGELAUNCH_CHROMIUM", "/usr/bin/chromium"))
    ap.add_argument("--trace", default=None, help="trace file name in --traces (default v100_rank0.pt.trace.json.gz)")
    ap.add_argument("--quick", action="store_true",
                    help="tiny run that keeps the script working in tests: sampled_rank0 (5k events), 1 rank, "
                         "6 frames per zoom level, 1 paint, 8 wheel events; its figures mean nothing")
    args = ap.parse_args()
    if args.quick:
        args.trace = args.trace or "sampled_rank0.pt.trace.json.gz"
        args.ranks, sizes = 1, dict(frames_per_zoom=6, first_paints=1, wheel_events=8)
    else:
        sizes = {}
    trace = args.traces / (args.trace or "v100_rank0.pt.trace.json.gz")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ["SAGELAUNCH_HOME"] = str(tmp / "home")
        cli_s, inproc_s = bench_report(trace, tmp)
        parts = bench_report_parts(trace, tmp, repeats=1 if args.quick else 3)
        name, n = make_big_job(trace, args.ranks, tmp / "home")
        b = bench_browser(name, args.chromium, **sizes)
    label = trace.name.split(".")[0]
    rows = [
        (f"report: CLI process, {label} (s)", cli_s, 3.0),
        (f"report: in-process, {label} (s)", inproc_s, 3.0),
        ("report with timeline tab, in-process, median (s)", parts["with_s"], 3.0),
        ("report without it (dashboard only), same run (s)", parts["without_s"], 3.0),
        ("report with timeline tab (MB)", parts["with_mb"], None),
        ("report without it (MB)", parts["without_mb"], None),
        (f"UI load of {b['events']} events, server side (s)", b["load_s"], None),
        ("dashboard first paint (s)", b["dashboard_first_paint_s"], 2.0),
        ("timeline first frame (s)", b["timeline_ready_s"], None),
        *[(f"timeline frame{raster}, {label}: {stat} (ms)", b[f"frame_{key}{raster}_{stat}_ms"], 50.0)
          for raster in ("", "_raster")
          for key, label in (("all", "all events visible"), ("step", "one step"), ("deep", "2 ms window"))
          for stat in ("mean", "p95", "max")],
        ("wheel zoom, rAF frame gap p95 (ms)", b["raf_gap_p95_ms"], 50.0),
        ("timeline payload (MB)", b["payload_mb"], None),
        ("same data as Chrome/Perfetto JSON (MB)", b["chrome_mb"], None),
    ]
    print(f"{'measure':52s} {'value':>10s} {'target':>8s} {'value/target':>13s}")
    for label, value, target in rows:
        ratio = f"{value / target:13.2f}" if target else " " * 13
        print(f"{label:52s} {value:10.3f} {target if target else '':>8} {ratio}")
    print(f"{'Chrome JSON / our payload (size ratio)':52s} {b['chrome_mb'] / b['payload_mb']:10.2f}")
    print(f"{'report with / without the timeline tab: time':52s} {parts['with_s'] / parts['without_s']:10.2f}")
    print(f"{'report with / without the timeline tab: size':52s} {parts['with_mb'] / parts['without_mb']:10.2f}")
    if b.get("lod_all"):
        s = b["lod_all"]
        print(f"full zoom-out frame: {s['rects']} pixel spans ({s['coverageRects']} coverage runs) in one buffer, "
              f"{s['styles']} canvas fill style(s) for slices; {s['events']} events/bins read of {b['events']} "
              f"events; {s['levelLanes']} lanes from precomputed levels, {s['exactLanes']} exact")
    print("(frame = script time of one draw; frame_raster = until Chromium has rasterised it)")
    print(f"(machine load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          "max frame times include other processes' CPU time)")


if __name__ == "__main__":
    main()
