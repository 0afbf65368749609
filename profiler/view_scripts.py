"""The page code every view shares (profiler/static/view_util.js: `SageViewUtil.esc`), one file for the report,
the timeline page and the profile browser; a page loads it before its own scripts."""

from __future__ import annotations

from pathlib import Path

VIEW_UTIL_JS = Path(__file__).with_name("static") / "view_util.js"


def view_util_script() -> str:
    """The shared code as an inline <script> block, for the self-contained pages."""
    return f"<script>{VIEW_UTIL_JS.read_text()}</script>"
