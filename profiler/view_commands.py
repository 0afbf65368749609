"""What `sagelaunch profile report|export|timeline` do, once profiler/cli_views.py has read their arguments; loaded
only when one of them runs (the report and the timeline bring numpy and the analysis)."""

from __future__ import annotations

from pathlib import Path

from sagelaunch.profiler.loader import load_profile
from sagelaunch.profiler.report.html import write_report
from sagelaunch.profiler.timeline.html import write_timeline
from sagelaunch.profiler.timeline.model import TimelineModel, build_timeline
from sagelaunch.profiler.timeline.perfetto import write_perfetto

__all__ = ["write_report", "write_timeline", "export_perfetto"]


def export_perfetto(path: str, perfetto: Path) -> tuple[TimelineModel, Path]:
    """The timeline of the profile at `path`, written as a Perfetto/Chrome trace to `perfetto`."""
    model = build_timeline(load_profile(path))
    return model, write_perfetto(model, perfetto)
