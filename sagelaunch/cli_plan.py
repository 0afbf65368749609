"""`sagelaunch plan MODEL --instance-type T --instance-count N --global-batch B [layout options | --search]`:
memory per GPU, verdict, speed and cost of a model-parallel layout before launch (sagelaunch.planner)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from sagelaunch.planner.chart import write_memory_chart
from sagelaunch.planner.layout import Layout
from sagelaunch.planner.models import model_from_config
from sagelaunch.planner.nearest import changes_that_fit
from sagelaunch.planner.plan import TERM_NAMES, plan
from sagelaunch.planner.search import search

GIB = 2**30


def plan_command(
    model: str = typer.Argument(..., help="A Hugging Face config.json (or its folder), read offline."),
    instance_type: str = typer.Option(..., "--instance-type", help="e.g. ml.p4d.24xlarge"),
    instance_count: int = typer.Option(1, "--instance-count"),
    global_batch: int = typer.Option(..., "--global-batch", help="Sequences per step, all replicas together."),
    seq_len: Optional[int] = typer.Option(None, "--seq-len", help="Default: the model's positions."),
    tp: int = typer.Option(1, "--tp", help="tensor_parallel_degree"),
    pp: int = typer.Option(1, "--pp", help="pipeline_parallel_degree"),
    sdp: int = typer.Option(1, "--sdp", help="sharded_data_parallel_degree"),
    shard_optimizer_state: bool = typer.Option(False, "--shard-optimizer-state"),
    checkpointing: bool = typer.Option(False, "--activation-checkpointing"),
    offload: bool = typer.Option(False, "--offload-activations"),
    microbatches: int = typer.Option(1, "--microbatches"),
    precision: str = typer.Option("bf16", "--precision", help="fp32, fp16 or bf16"),
    runtime: str = typer.Option("smp", "--runtime", help="smp (SageMaker's SMP v1) or sagelaunch (local)"),
    region: Optional[str] = typer.Option(None, "--region", help="For the price."),
    price_per_hour: Optional[float] = typer.Option(
        None, "--price-per-hour", help="USD per instance-hour (your on-demand or negotiated price); without it the "
                                       "catalog's, or \"price unknown\"."),
    search: bool = typer.Option(False, "--search", help="Rank every layout that fits instead."),
    chart: Optional[Path] = typer.Option(None, "--chart", help="Write the memory breakdown chart (HTML)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Will it fit? Memory per GPU, speed and cost of a model-parallel job, before anything is paid for."""
    from rich.console import Console
    from rich.markup import escape

    console, errors = Console(highlight=False), Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        shape = model_from_config(model, seq_len=seq_len)
        if search:
            _search(console, shape, instance_type, instance_count, global_batch, seq_len, precision, runtime, chart,
                    as_json)
            return
        layout = Layout.model_validate({
            "tp": tp, "pp": pp, "sdp": sdp, "shard_optimizer_state": shard_optimizer_state,
            "activation_checkpointing": checkpointing, "offload_activations": offload, "microbatches": microbatches,
            "precision": precision})
        _one(console, shape, layout, instance_type, instance_count, global_batch, seq_len, region, runtime, chart,
             as_json, price_per_hour)
    except ValueError as exc:
        errors.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(1) from None


def _one(console, shape, layout, instance_type, count, batch, seq_len, region, runtime, chart, as_json,
         price_per_hour=None) -> None:
    from rich.table import Table

    result = plan(shape, layout, instance_type, count, batch, seq_len=seq_len, region=region, runtime=runtime,
                  price_per_hour=price_per_hour)
    if chart:
        write_memory_chart(chart, [(f"stage {m.stage}", m) for m in result.stages], f"{result.model}, "
                           f"{layout.label()} on {count} × {instance_type}")
    nearest = []
    if result.verdict.status == "does not fit":
        nearest = changes_that_fit(shape, layout, instance_type, count, batch, seq_len=seq_len, runtime=runtime)
    if as_json:
        print(json.dumps({**result.model_dump(mode="json"), "changes_that_fit": [
            {"change": text, "verdict": p.verdict.message} for text, p in nearest]}, indent=2))
        return
    console.print(f"{result.model} on {count} × {instance_type} ({result.world_size} {result.accelerator}), "
                  f"{layout.label()} {layout.precision}, global batch {batch}, seq {result.seq_len} [{runtime}]")
    table = Table("per GPU (GiB), at its peak", *[f"stage {m.stage}" for m in result.stages])
    for term, name in TERM_NAMES.items():
        table.add_row(name, *[f"{m.terms()[term] / GIB:.2f}" for m in result.stages])
    table.add_row("total", *[f"{m.total / GIB:.2f} ({m.share:.0%})" for m in result.stages])
    console.print(table)
    console.print(result.verdict.message)
    if result.verdict.status == "does not fit":
        console.print("the nearest layouts that fit, one change each: " + ("; ".join(
            f"{text} ({p.verdict.status}, {p.most_loaded.total / GIB:.1f} GiB)" for text, p in nearest)
            or "none: use more instances or a type with more GPU memory"))
    if result.speed:
        s = result.speed
        console.print(f"step {s.step_seconds:.3f} s, {s.samples_per_second:.1f} samples/s, "
                      f"{s.tokens_per_second:,.0f} tokens/s, MFU {s.mfu:.0%}, bubble {s.bubble_share:.0%}, "
                      f"tp communication {s.tp_comm_seconds:.3f} s, exposed dp communication "
                      f"{s.dp_comm_exposed_seconds:.3f} s ({result.speed_note})")
    else:
        console.print(result.speed_note)
    if result.cost:
        c = result.cost
        console.print(f"${c.usd_per_hour:,.2f}/hour, ${c.usd_per_1000_steps or 0:,.2f} per 1,000 steps, "
                      f"${c.usd_per_billion_tokens or 0:,.2f} per billion tokens ({c.source})")
    else:
        console.print(result.cost_note)


def _search(console, shape, instance_type, count, batch, seq_len, precision, runtime, chart, as_json) -> None:
    from rich.table import Table

    result = search(shape, instance_type, count, batch, seq_len=seq_len, precision=precision, runtime=runtime)
    if chart and result.rows:
        write_memory_chart(chart, [(r.layout.label(), r.memory) for r in result.rows[:12]],
                           f"layouts that fit, {count} × {instance_type}")
    if as_json:
        print(json.dumps(result.model_dump(mode="json"), indent=2))
        return
    table = Table("#", "layout", "verdict", "memory", "step s", "tokens/s", "MFU")
    for i, r in enumerate(result.rows, 1):
        s = r.speed
        table.add_row(str(i), r.layout.label(), r.status, f"{r.memory.total / GIB:.1f} GiB ({r.memory.share:.0%})",
                      f"{s.step_seconds:.3f}" if s else "unknown", f"{s.tokens_per_second:,.0f}" if s else "",
                      f"{s.mfu:.0%}" if s else "")
    console.print(table)
    console.print(f"{result.considered} layouts considered; {result.why}")


def register(app: typer.Typer) -> None:
    app.command("plan")(plan_command)
