"""`sagelaunch profile …` commands of part 1 (analyze); part 2 adds its views through profiler/cli_views.py."""

from __future__ import annotations

import typer

profile_app = typer.Typer(
    name="profile",
    help="Analyse, report and browse profiles (our artifacts or torch.profiler/Kineto traces).",
    no_args_is_help=True,
    add_completion=False,
)


@profile_app.command("analyze")
def analyze_cmd(
    path: str = typer.Argument(..., help="A trace (.json/.json.gz), a folder of ranks, or a job's profiler output."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object (the analysis) instead of tables."),
    top: int = typer.Option(10, "--top", min=1, help="How many kernels to list in top_kernels."),
) -> None:
    """Analyse a profile: GPU temporal and kernel-type breakdown (HTA definitions), launches, steps, utilisation."""
    from profiler import prefetch

    prefetch.start(path)  # gunzip in a thread while the imports below run
    from profiler.analysis import analyze
    from profiler.kineto_reader import ProfileLoadError

    try:
        result = analyze(path, top_n=top)
    except ProfileLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    if as_json:
        import sys

        import orjson

        sys.stdout.buffer.write(orjson.dumps(result, option=orjson.OPT_NON_STR_KEYS) + b"\n")
        sys.stdout.flush()
        return
    from profiler.summary import print_summary

    print_summary(result)


try:  # part 2 (dashboard, timeline, browser) registers its commands here
    from profiler.cli_views import register as _register_views
except ImportError:  # pragma: no cover - only while part 2 is absent
    _register_views = None
if _register_views is not None:
    _register_views(profile_app)

if __name__ == "__main__":
    profile_app()
