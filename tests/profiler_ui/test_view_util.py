"""The views' one shared page helper (profiler/static/view_util.js): every view loads it, none writes its own
escaping, and names that look like HTML show as text in the timeline page, the report and the profile browser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sagelaunch.profiler.cli import profile_app
from tests.profiler import synthetic as syn

ROOT = Path(__file__).resolve().parents[2]
HOSTILE_KERNEL = '<img src=x onerror="window.pwned=1">k&"q'
HOSTILE_STEP = '<b id="bold">step</b>'
ESCAPED = "&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt;"


def test_no_view_script_defines_its_own_escape():
    scripts = [p for p in (ROOT / "profiler").rglob("*.js") if p.name != "view_util.js"]
    assert len(scripts) >= 7
    own = [str(p.relative_to(ROOT)) for p in scripts if re.search(r"function esc\b|\besc\s*=\s*\(", p.read_text())]
    assert own == []


@pytest.fixture(scope="module")
def hostile_profile(tmp_path_factory) -> Path:
    """Two steps whose first step and one kernel have names written as HTML."""
    rank = syn.healthy(steps=2, step_ms=2, kernel_us=600)
    rank.events[0] = (HOSTILE_STEP, *rank.events[0][1:])
    rank.kernel(HOSTILE_KERNEL, syn.T0 + 100_000, 50_000)
    return syn.write(tmp_path_factory.mktemp("hostile") / "profile", rank)


def _write(command: str, profile: Path, out: Path) -> Path:
    result = CliRunner().invoke(profile_app, [command, str(profile), "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out


def _open(page, path: Path) -> None:
    page.goto(path.as_uri())
    page.wait_for_selector('[data-ready="1"]', timeout=60_000)
    assert page.evaluate("SageViewUtil.esc('<a href=\"x\">&</a>')") == ESCAPED


def _nothing_ran(page) -> None:
    assert page.evaluate("window.pwned === undefined && !document.getElementById('bold')")
    assert page.console_errors == []


@pytest.mark.browser
@pytest.mark.slow
def test_the_timeline_page_shows_html_names_as_text(page, hostile_profile, tmp_path):
    _open(page, _write("timeline", hostile_profile, tmp_path / "timeline.html"))
    index = page.evaluate(f"timeline.names.indexOf({HOSTILE_KERNEL!r})")
    event = page.evaluate(f"Array.from(timeline.name).indexOf({index})")
    page.evaluate(f"timeline.select({event})")
    assert page.locator(".tl-f-name").inner_text() == HOSTILE_KERNEL  # the event panel (timeline_interact.js)
    annotations = page.locator(".tl-annotations a, ul a").all_inner_texts()  # the annotation list (timeline_nav.js)
    assert HOSTILE_STEP in annotations
    _nothing_ran(page)


@pytest.mark.browser
@pytest.mark.slow
def test_the_report_shows_html_names_as_text(page, hostile_profile, tmp_path):
    _open(page, _write("report", hostile_profile, tmp_path / "report.html"))
    assert page.evaluate("document.querySelectorAll('#dashboard img, #timeline img').length") == 0
    _nothing_ran(page)


@pytest.mark.browser
def test_the_profile_browser_serves_the_shared_helper(page, ui_server):
    page.goto(ui_server.url)
    page.wait_for_selector("#jobs-table tbody td.job-name")  # app.js ran with the shared esc
    assert page.evaluate("SageViewUtil.esc('<a href=\"x\">&</a>')") == ESCAPED
    assert page.console_errors == []
