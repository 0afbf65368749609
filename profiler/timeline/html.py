"""`sagelaunch profile timeline PATH -o FILE.html`: the timeline as one self-contained HTML file that opens offline.

The page inlines the timeline's CSS and scripts and the payload (profiler/timeline/payload.py) the profile browser
serves, so the same renderer draws it; nothing loads from the network. The report (profiler/report/html.py) embeds
the same parts in its Timeline tab.
"""

from __future__ import annotations

import html
from pathlib import Path

from sagelaunch.profiler.inline import json_for_script
from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.timeline.payload import payload_of
from sagelaunch.profiler.view_scripts import view_util_script

STATIC = Path(__file__).with_name("static")
SCRIPTS = ("timeline.js", "timeline_lod.js", "timeline_interact.js", "timeline_nav.js")  # this order


def timeline_css() -> str:
    return (STATIC / "timeline.css").read_text()


def timeline_scripts() -> str:
    """The renderer as inline <script> blocks (after view_util_script()); then `new SageTimeline(element, payload)`
    draws a payload."""
    return "".join(f"<script>{(STATIC / name).read_text()}</script>" for name in SCRIPTS)


def render_timeline(payload: dict) -> str:
    title = html.escape(f"sagelaunch timeline: {payload.get('title', '')}")
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{title}</title>"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
        "style-src 'unsafe-inline'; img-src data: blob:\">"
        "<style>html,body{margin:0;height:100%;font:13px sans-serif;background:#f5f7fa}"
        "body{display:flex;flex-direction:column}h1{font-size:14px;margin:6px 12px 0}"
        "#timeline{flex:1;min-height:0;margin:0 12px 8px}\n"
        f"{timeline_css()}</style></head><body>"
        f"<h1>{title}</h1><div id=\"timeline\"></div>"
        f"<script id=\"timeline-data\" type=\"application/json\">{json_for_script(payload)}</script>{view_util_script()}"
        f"{timeline_scripts()}"
        "<script>window.timeline = new SageTimeline(document.getElementById('timeline'),"
        " JSON.parse(document.getElementById('timeline-data').textContent));"
        "document.getElementById('timeline').dataset.ready = '1';</script>"
        "</body></html>\n"
    )


def write_timeline(path, out: Path, title: str | None = None) -> tuple[Path, int]:
    """Load `path` (trace, folder of ranks or our artifact) and write its timeline page; (file, events)."""
    payload, events = payload_of(load_profile(path), title or str(path))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_timeline(payload), encoding="utf-8")
    return out, events
