"""Readable Rich summary of an analysis dict (what `sagelaunch profile analyze` prints without --json)."""

from __future__ import annotations


def _short(name: str, width: int = 70) -> str:
    return name if len(name) <= width else name[: width - 1] + "…"


def print_summary(result: dict, console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    console.print(f"[bold]Profile[/bold] {result.get('source', '')}")
    for w in result.get("warnings", []):
        console.print(f"[yellow]warning:[/yellow] {w}")
    for rank, r in result["ranks"].items():
        console.rule(f"rank {rank} · {r['events']} events")
        t = r.get("temporal")
        if t:
            tab = Table(title="GPU temporal breakdown (HTA definitions)")
            for col in ("idle", "compute", "non-compute", "span"):
                tab.add_column(col, justify="right")
            tab.add_row(
                f"{t['idle_us'] / 1e3:,.1f} ms ({t['idle_pct']}%)",
                f"{t['compute_us'] / 1e3:,.1f} ms ({t['compute_pct']}%)",
                f"{t['non_compute_us'] / 1e3:,.1f} ms ({t['non_compute_pct']}%)",
                f"{t['span_us'] / 1e3:,.1f} ms",
            )
            console.print(tab)
        if r.get("kernel_types"):
            tab = Table(title="Kernel types")
            tab.add_column("type")
            tab.add_column("time", justify="right")
            for k, v in r["kernel_types"].items():
                tab.add_row(k, f"{v / 1e3:,.2f} ms")
            console.print(tab)
        if r.get("top_kernels"):
            tab = Table(title=f"Top kernels (of {r['kernels']['count']} launches, {r['kernels']['total_us'] / 1e3:,.1f} ms)")
            tab.add_column("kernel")
            tab.add_column("total", justify="right")
            tab.add_column("count", justify="right")
            for k in r["top_kernels"]:
                tab.add_row(_short(k["name"]), f"{k['total_us'] / 1e3:,.2f} ms", str(k["count"]))
            console.print(tab)
        launch = r.get("launch") or {}
        if launch.get("count"):
            console.print(
                f"Launches: {launch['count']}, mean launch delay {launch['mean_launch_delay_us']:,.1f} µs, "
                f"p95 {launch['p95_launch_delay_us']:,.1f} µs"
            )
        steps = r.get("steps")
        if steps:
            console.print(
                f"Steps: {steps['count']}, mean {steps['mean_us'] / 1e3:,.2f} ms, p50 {steps['p50_us'] / 1e3:,.2f} ms, "
                f"max {steps['max_us'] / 1e3:,.2f} ms"
            )
        if r.get("precision"):
            console.print("Kernel precision: " + ", ".join(f"{k} {v / 1e3:,.2f} ms" for k, v in r["precision"].items()))
        if r.get("memory_ops"):
            console.print(
                "Memory ops: " + ", ".join(f"{k} {v['us'] / 1e3:,.2f} ms ×{v['count']}" for k, v in r["memory_ops"].items())
            )
        cpu = r.get("cpu")
        if cpu:
            console.print(f"CPU active {cpu['active_us'] / 1e3:,.1f} ms of {cpu['span_us'] / 1e3:,.1f} ms ({cpu['threads']} threads)")
        for note in r.get("notes", []):
            console.print(f"[dim]{note}[/dim]")
    for host, h in (result.get("hosts") or {}).items():
        console.rule(f"host {host} · {h['span_s']} s of utilisation samples")
        tab = Table()
        tab.add_column("metric")
        tab.add_column("mean", justify="right")
        tab.add_column("series", justify="right")
        for m, d in h["metrics"].items():
            tab.add_row(m, f"{d['mean']:,.1f}", str(len(d["series"])))
        console.print(tab)
