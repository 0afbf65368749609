"""Names from a trace never break the page that shows them (issue 32): an annotation named `<!--<script>` (and one
trying to end the script) used to blank report.html's dashboard and keep timeline.html from ever becoming ready,
because the names are embedded in an inline script. Real headless Chromium; the pages opened from disk."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from sagelaunch.profiler.cli import profile_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]
HOSTILE = ["<!--<script> annotation", "</script><script>window.pwned = 1</script>", "a & b > c \u2028 d \u2029 e"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile-names")
    events = [{"ph": "X", "cat": "cpu_op", "name": f"aten::op{i % 7}", "pid": 1, "tid": 1 + i % 3,
               "ts": 1000 + 40 * i, "dur": 30} for i in range(300)]
    events += [{"ph": "X", "cat": "user_annotation", "name": name, "pid": 1, "tid": 1, "ts": 1000 + 2000 * k,
                "dur": 1500} for k, name in enumerate(HOSTILE)]
    trace = root / "hostile.pt.trace.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    out = {}
    for view in ("report", "timeline"):
        out[view] = root / f"{view}.html"
        result = CliRunner().invoke(profile_app, [view, str(trace), "-o", str(out[view])])
        assert result.exit_code == 0, result.output
    return out


def test_the_timeline_page_becomes_ready_and_shows_the_names_as_text(page, pages):
    page.goto(pages["timeline"].as_uri())
    page.wait_for_selector('#timeline[data-ready="1"]', timeout=60_000)
    assert page.evaluate("window.pwned") is None
    names = page.evaluate("window.timeline.names")
    assert all(name in names for name in HOSTILE)
    assert page.console_errors == []


def test_the_report_shows_its_dashboard_and_its_timeline(page, pages):
    page.goto(pages["report"].as_uri())
    page.wait_for_selector('#dashboard[data-ready="1"]', timeout=60_000)
    assert page.is_visible("#dashboard") and page.evaluate("window.pwned") is None
    page.click('.rp-tabs button[data-tab="timeline"]')
    page.wait_for_selector('#timeline[data-ready="1"]', timeout=60_000)
    assert all(name in page.evaluate("window.timeline.names") for name in HOSTILE)
    assert page.evaluate("window.pwned") is None and page.console_errors == []
