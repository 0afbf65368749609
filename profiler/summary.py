"""Readable Rich summary of an analysis result (what `sagelaunch profile analyze` prints without --json).

Headline numbers come from the result's ``figures`` (profiler/figures.py) as they are, so this text,
the JSON, the report and the profile browser print the same figure for the same quantity.
"""

from __future__ import annotations

from sagelaunch.profiler.figures import ms, pct
from sagelaunch.profiler.records import AnalysisResult, Figure, ProfileDiff

def _short(name: str, width: int = 150) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


SEVERITY_STYLE = {"high": "bold red", "medium": "yellow", "low": "cyan"}


def _figures(console, figs: list[Figure]) -> None:
    from rich.markup import escape

    for f in figs:  # names may hold "[...]", which Rich would read as markup
        console.print(f"{escape(f.label)}: [bold]{escape(f.text)}[/bold]", soft_wrap=True, highlight=False)


def print_findings(result: AnalysisResult, console) -> None:
    from rich.markup import escape

    found = result.findings
    console.rule(f"Findings ({len(found)})")
    if not found:
        console.print("No finding: none of the rules (profiler/README.md, Findings) fired on this profile.")
    for f in found:
        where = f" rank {f.rank}" if f.rank is not None else ""
        style = SEVERITY_STYLE.get(f.severity, "")
        console.print(f"[{style}]{f.severity.upper()}[/{style}] {f.rule}{where}: {escape(f.summary)}", soft_wrap=True, highlight=False)
        console.print("  evidence: " + escape(", ".join(f"{k}={v}" for k, v in f.evidence.items())), soft_wrap=True, highlight=False)
        console.print(f"  fix: {escape(f.fix)}", soft_wrap=True, highlight=False)


def print_summary(result: AnalysisResult, console=None) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    console.print(f"[bold]Profile[/bold] {escape(result.source)}", highlight=False)
    for w in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}", highlight=False)
    figs = result.figures
    for rank, r in result.ranks.items():
        console.rule(f"rank {rank} · {r.events:,} events")
        _figures(console, [f for f in figs if f.rank == rank])
        if r.kernel_types:
            tab = Table(title="GPU time by kernel type (HTA definitions; overlaps shown as their own rows)")
            tab.add_column("type")
            tab.add_column("time", justify="right")
            tab.add_column("of the GPU span", justify="right")
            for kind, v in r.kernel_types.items():
                tab.add_row(kind, ms(v), pct(v, r.temporal.span_us if r.temporal else 0))
            console.print(tab)
        if r.top_kernels:
            tab = Table(title=f"Top kernels by total time (of {r.kernels.count:,} kernels)")
            tab.add_column("kernel", overflow="fold")
            tab.add_column("total", justify="right")
            tab.add_column("count", justify="right")
            for k in r.top_kernels:
                tab.add_row(escape(_short(k.name)), ms(k.total_us), f"{k.count:,}")
            console.print(tab)
        if r.annotations:
            tab = Table(title="Annotations (CPU-side and GPU-side spans apart; steps pooled)")
            for col in ("annotation", "spans", "p50", "total"):
                tab.add_column(col, justify="left" if col == "annotation" else "right", overflow="fold")
            for a in r.annotations[:10]:
                tab.add_row(escape(a.name), f"{a.count:,}", ms(a.p50_us), ms(a.total_us))
            console.print(tab)
        p95 = r.launch.p95_launch_delay_us  # None exactly when no launch was matched (count 0)
        if p95 is not None:
            console.print(f"Launch wait p95: {ms(p95)}", highlight=False)
        if r.precision:
            console.print("Kernel precision (GPU time): " + escape(", ".join(f"{k} {ms(v)}" for k, v in r.precision.items())),
                          soft_wrap=True, highlight=False)
        if r.memory_ops:
            console.print("Memory operations: " + ", ".join(f"{k} {ms(v.us)} ×{v.count:,}" for k, v in r.memory_ops.items()),
                          soft_wrap=True, highlight=False)
        for note in r.notes:
            console.print(f"[dim]{escape(note)}[/dim]", highlight=False)
    compared = result.ranks_compared
    if compared:
        tab = Table(title="Ranks side by side (per step; * the largest of the column)")
        tab.add_column("rank")
        for c in compared.columns:
            tab.add_column(f"{c.label} ({c.unit})", justify="right")
        for row in compared.rows:
            tab.add_row(str(row["rank"]), *(("" if c.key not in row else f"{row[c.key]:,}" +
                                        ("*" if compared.largest[c.key] == row["rank"] else ""))
                                       for c in compared.columns))
        console.print(tab)
    for host, h in result.hosts.items():
        console.rule(f"host {host} · {h.span_s} s of utilisation samples")
        _figures(console, [f for f in figs if f.host == host])
    print_findings(result, console)


def print_diff(result: ProfileDiff, console=None) -> None:
    """`profile diff A B`: per-step phases, then annotations and kernels, largest change first (B - A)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    console = console or Console()
    console.print(f"[bold]A[/bold] {escape(result.a)}\n[bold]B[/bold] {escape(result.b)}", highlight=False)

    def change(d: float) -> str:
        return ("slower " if d > 0 else "faster " if d < 0 else "") + ms(abs(d))

    if result.phases:
        tab = Table(title="Per step (steps with or without annotations; warm-up left out)")
        for col in ("", "A", "B", "B - A"):
            tab.add_column(col, justify="left" if not col else "right")
        for p in result.phases:
            tab.add_row(p.phase, ms(p.a_us_per_step), ms(p.b_us_per_step), change(p.diff_us_per_step))
        console.print(tab)
    for rows, title in ((result.annotations, "Annotations (host-side spans, total)"),
                        (result.kernels, "GPU kernels (total, as HTA's trace diff)")):
        if not rows:
            continue
        tab = Table(title=title)
        for col in ("name", "count A", "count B", "A", "B", "B - A"):
            tab.add_column(col, justify="left" if col == "name" else "right", overflow="fold")
        for r in rows:
            tab.add_row(escape(_short(r.name, 80)), f"{r.a_count:,}", f"{r.b_count:,}", ms(r.a_total_us),
                        ms(r.b_total_us), change(r.diff_duration_us))
        console.print(tab)


__all__ = ["print_summary", "print_findings", "print_diff"]
