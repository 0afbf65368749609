"""The memory breakdown per layout as a stacked bar chart (Plotly, as the profiler's report), one bar per layout's
most loaded GPU, the GPU's capacity and the 85 % "tight" line drawn across. Plotly is imported when called."""

from __future__ import annotations

from pathlib import Path

from sagelaunch.planner.memory import MemoryBreakdown
from sagelaunch.planner.plan import TERM_NAMES, TIGHT

GIB = 2**30


def memory_chart_html(bars: list[tuple[str, MemoryBreakdown]], title: str) -> str:
    import plotly.graph_objects as go

    labels = [label for label, _ in bars]
    fig = go.Figure()
    for term, name in TERM_NAMES.items():
        values = [m.terms()[term] / GIB for _, m in bars]
        if any(values):
            fig.add_bar(name=name, x=labels, y=values, hovertemplate="%{x}<br>" + name + ": %{y:.2f} GiB<extra></extra>")
    capacity = bars[0][1].capacity / GIB if bars else 0
    fig.add_hline(y=capacity, line_color="red", annotation_text=f"GPU memory {capacity:.0f} GiB")
    fig.add_hline(y=capacity * TIGHT, line_dash="dot", line_color="orange", annotation_text="tight (85 %)")
    fig.update_layout(barmode="stack", title=title, yaxis_title="GiB on the most loaded GPU", template="plotly_white")
    return fig.to_html(include_plotlyjs=True, full_html=True)


def write_memory_chart(path: Path, bars: list[tuple[str, MemoryBreakdown]], title: str) -> Path:
    path.write_text(memory_chart_html(bars, title))
    return path
