"""`sagelaunch profile timeline PATH -o FILE.html`: the timeline as one self-contained HTML file that opens offline.

The page inlines the timeline's CSS and scripts and the payload (profiler/timeline/payload.py) the profile browser
serves, so the same renderer draws it; nothing loads from the network.
"""

from __future__ import annotations

import html
from pathlib import Path

STATIC = Path(__file__).with_name("static")
SCRIPTS = ("timeline.js", "timeline_lod.js", "timeline_interact.js", "timeline_nav.js")  # this order


def render_timeline(payload: dict) -> str:
    from profiler.report.html import json_for_script

    title = html.escape(f"sagelaunch timeline: {payload.get('title', '')}")
    scripts = "".join(f"<script>{(STATIC / name).read_text()}</script>" for name in SCRIPTS)
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{title}</title>"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; "
        "style-src 'unsafe-inline'; img-src data: blob:\">"
        "<style>html,body{margin:0;height:100%;font:13px sans-serif;background:#f5f7fa}"
        "body{display:flex;flex-direction:column}h1{font-size:14px;margin:6px 12px 0}"
        "#timeline{flex:1;min-height:0;margin:0 12px 8px}\n"
        f"{(STATIC / 'timeline.css').read_text()}</style></head><body>"
        f"<h1>{title}</h1><div id=\"timeline\"></div>"
        f"<script id=\"timeline-data\" type=\"application/json\">{json_for_script(payload)}</script>{scripts}"
        "<script>window.timeline = new SageTimeline(document.getElementById('timeline'),"
        " JSON.parse(document.getElementById('timeline-data').textContent));"
        "document.getElementById('timeline').dataset.ready = '1';</script>"
        "</body></html>\n"
    )


def write_timeline(path, out: Path, title: str | None = None) -> tuple[Path, int]:
    """Load `path` (trace, folder of ranks or our artifact) and write its timeline page; (file, events)."""
    from profiler.loader import load_profile
    from profiler.timeline.model import build_timeline
    from profiler.timeline.payload import to_payload

    model = build_timeline(load_profile(path))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_timeline(to_payload(model, title=title or str(path))), encoding="utf-8")
    return out, len(model)
