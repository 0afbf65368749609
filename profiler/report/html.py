"""`sagelaunch profile report`: one self-contained HTML file with the dashboard and the timeline (two tabs).

Everything is inlined (plotly.min.js from the installed plotly package, our dashboard and timeline scripts and
styles, and both views' data as JSON script blocks), so the file opens from disk with no network.
"""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import Any

from sagelaunch.profiler.inline import json_for_script
from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.report.data import dashboard_data
from sagelaunch.profiler.timeline.html import timeline_css, timeline_scripts
from sagelaunch.profiler.timeline.payload import payload_of
from sagelaunch.profiler.view_scripts import view_util_script

STATIC = Path(__file__).with_name("static")


def plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def render_report(data: dict[str, Any], timeline: dict[str, Any] | None = None) -> str:
    """The page: a Dashboard tab and, given the timeline's payload (profiler/timeline/payload.py), a Timeline tab
    drawn by the same renderer as `profile timeline` and the browser."""
    title = html.escape(f"sagelaunch profile report: {data.get('title', '')}")
    meta = html.escape(
        f"source {data.get('title', '')} · ranks {', '.join(map(str, data.get('ranks', [])))} · "
        f"hosts {', '.join(data.get('hosts', []))} · generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}"
    )
    tabs = timeline_part = ""
    if timeline is not None:
        tabs = ("<nav class=\"rp-tabs\"><button data-tab=\"dashboard\">Dashboard</button>"
                "<button data-tab=\"timeline\">Timeline</button></nav>")
        timeline_part = (f"<script id=\"timeline-data\" type=\"application/json\">{json_for_script(timeline)}</script>"
                         f"{timeline_scripts()}")
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{title}</title>"
        # no external resource may load: the report is read offline
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; "
        "style-src 'unsafe-inline'; img-src data: blob:; font-src data:\">"
        f"<style>{(STATIC / 'report.css').read_text()}\n{(STATIC / 'dashboard.css').read_text()}\n"
        f"{timeline_css() if timeline is not None else ''}</style>"
        f"<script>{plotly_js()}</script></head><body>"
        f"<h1>{title}</h1><div class=\"meta\">{meta}</div>{tabs}"
        "<section id=\"view-dashboard\"><div id=\"dashboard\"></div></section>"
        + ("<section id=\"view-timeline\" hidden><div id=\"timeline\"></div></section>" if timeline is not None else "")
        + f"<script id=\"dashboard-data\" type=\"application/json\">{json_for_script(data)}</script>"
        f"{view_util_script()}<script>{(STATIC / 'dashboard.js').read_text()}</script>{timeline_part}"
        f"<script>{(STATIC / 'report.js').read_text()}</script>"
        "</body></html>\n"
    )


def write_report(path, out: Path, title: str | None = None) -> Path:
    """Load `path` (trace, folder or artifact), build the dashboard and write it to `out`."""
    profile = load_profile(path)
    data = dashboard_data(profile, title=title or str(path))
    timeline, _ = payload_of(profile, title=title or str(path))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(data, timeline), encoding="utf-8")
    return out
