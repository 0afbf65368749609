"""`sagelaunch profile report`: one self-contained HTML file with the dashboard.

Everything is inlined (plotly.min.js from the installed plotly package, our dashboard.js/css and the
data as a JSON script block), so the file opens from disk with no network.
"""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import Any

STATIC = Path(__file__).with_name("static")


def json_for_script(data: Any) -> str:
    import orjson

    # "</" would end the <script> block early; "<\/" is the same JSON string
    return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY).decode().replace("</", "<\\/")


def plotly_js() -> str:
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def render_report(data: dict[str, Any]) -> str:
    title = html.escape(f"sagelaunch profile report: {data.get('title', '')}")
    src = html.escape(str(data.get("source") or "PATH"))
    meta = html.escape(
        f"source {data.get('title', '')} · ranks {', '.join(map(str, data.get('ranks', [])))} · "
        f"hosts {', '.join(data.get('hosts', []))} · generated {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}"
    )
    return (
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{title}</title>"
        # no external resource may load: the report is read offline
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; "
        "style-src 'unsafe-inline'; img-src data: blob:; font-src data:\">"
        f"<style>body{{font:13px sans-serif;margin:12px 18px;background:#f5f7fa}} h1{{font-size:18px;margin:4px 0}}"
        f" .meta{{color:#909399;margin-bottom:8px}}\n{(STATIC / 'dashboard.css').read_text()}</style>"
        f"<script>{plotly_js()}</script></head><body>"
        f"<h1>{title}</h1><div class=\"meta\">{meta}</div>"
        f"<div class=\"meta\">Timeline of this profile: <code>sagelaunch profile timeline {src} -o timeline.html</code>"
        f" or <code>sagelaunch profile ui {src}</code></div><div id=\"dashboard\"></div>"
        f"<script id=\"dashboard-data\" type=\"application/json\">{json_for_script(data)}</script>"
        f"<script>{(STATIC / 'dashboard.js').read_text()}</script>"
        "<script>window.dashboard = new SageDashboard(document.getElementById('dashboard'),"
        " JSON.parse(document.getElementById('dashboard-data').textContent), window.Plotly);</script>"
        "</body></html>\n"
    )


def analysis_of(profile) -> dict | None:
    """The analysis engine's result for the GPU active/idle split; None when part 1 cannot analyse it."""
    try:
        from profiler.analysis import analyze
    except ImportError:
        return None
    try:
        return analyze(profile)
    except Exception as exc:  # noqa: BLE001 - the report still renders every other section
        import logging

        logging.getLogger(__name__).warning("analysis failed, using the dashboard's own GPU split: %s", exc)
        return None


def write_report(path, out: Path, title: str | None = None) -> Path:
    """Load `path` (trace, folder or artifact), build the dashboard and write it to `out`."""
    from profiler.loader import load_profile
    from profiler.report.data import dashboard_data

    profile = load_profile(path)
    data = dashboard_data(profile, analysis_of(profile), title=title or str(path))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_report(data), encoding="utf-8")
    return out
