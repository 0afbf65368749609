"""The ranks side by side, in the analysis and in the report (real headless Chromium): on the labelled 2-rank DDP job
with a slow DataLoader on rank 1, rank 1's DataLoader and rank 0's Backward (where it waits) are the columns' largest."""

from __future__ import annotations

import pytest

from tests.profiler.conftest import REPO, analysis_json
from tests.profiler_ui.test_views_browser import cli

JOB = REPO / "tests" / "data" / "profiler" / "findings_set" / "ddp_input_straggler"


def test_the_analysis_compares_the_ranks():
    compared = analysis_json(JOB)["ranks_compared"]
    assert [row["rank"] for row in compared["rows"]] == ["0", "1"]
    assert compared["largest"]["input"] == "1" and compared["largest"]["backward"] == "0"
    assert {c["key"] for c in compared["columns"]} >= {"cycle", "input", "forward", "backward", "rss_peak"}
    assert analysis_json(REPO / "tests" / "data" / "profiler" / "findings_set" / "leak")["ranks_compared"] is None


@pytest.mark.browser
@pytest.mark.slow
def test_the_report_shows_the_ranks_side_by_side(page, tmp_path, artifacts_dir):
    out = tmp_path / "report.html"
    assert "wrote" in cli("report", str(JOB), "-o", str(out))
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(out.as_uri())
    page.wait_for_selector("#db-ranks tr[data-rank='1']", timeout=60_000)
    assert page.locator("#db-ranks tr[data-rank]").count() == 2
    assert "db-largest" in page.get_attribute("#db-ranks tr[data-rank='1'] td[data-key='input']", "class")
    assert "db-largest" in page.get_attribute("#db-ranks tr[data-rank='0'] td[data-key='backward']", "class")
    assert "db-largest" not in page.get_attribute("#db-ranks tr[data-rank='0'] td[data-key='input']", "class")
    page.locator("#db-ranks").screenshot(path=str(artifacts_dir / "report-ranks-side-by-side.png"))
