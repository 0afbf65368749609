"""`sagelaunch profile …` commands of part 1 (analyze, diff); part 2 adds its views through profiler/cli_views.py.

Every `sagelaunch` command imports this module (main() tests its command line with fast_analyze), so it stays
light: Typer (~0.1 s to import) is imported only when `profile_app` is first used (`profile analyze PATH --json`
runs through fast_analyze without it), and what the commands do (profiler/analysis_commands.py: the analysis,
numpy and msgspec) only when one of them runs.
"""

from __future__ import annotations

import os
from functools import lru_cache
from types import ModuleType


def plain_help_types() -> None:
    """--help without Typer's "<bool>" on flags (they take no value) and "<str>" on free text: a flag is named by
    itself, a path by its help; numbers, ranges and choices keep their type."""
    from typer import core

    if getattr(core, "_sagelaunch_plain_types", False):
        return

    def wrap(cls):
        shown = cls.display_type_rich

        def display_type_rich(self, ctx):
            if getattr(self, "is_flag", False):
                return None
            text = shown(self, ctx)
            return None if text in ("<str>", "<bool>") else text

        cls.display_type_rich = display_type_rich

    wrap(core.TyperOption)
    wrap(core.TyperArgument)
    core._sagelaunch_plain_types = True  # type: ignore[attr-defined]  # our mark on typer's module: wrap() must not wrap twice



@lru_cache(maxsize=None)
def _build_app():
    import typer

    plain_help_types()
    app = typer.Typer(
        name="profile",
        help="Analyse, report and browse profiles (our artifacts or torch.profiler/Kineto traces).",
        no_args_is_help=True,
        add_completion=False,
    )

    @app.command("analyze")
    def analyze_cmd(
        path: str = typer.Argument(..., help="A trace (.json/.json.gz), a folder of ranks, or a job's profiler output."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object (the analysis) instead of tables."),
        top: int = typer.Option(10, "--top", min=1, help="How many kernels to list in top_kernels."),
        pipeline_parallel_degree: int = typer.Option(
            None, "--pipeline-parallel-degree", min=1,
            help="The job's SMP pipeline_parallel_degree, for the pipeline_bubble finding (default: as our profiler "
                 "recorded it from the job's SMP parameters, else 1)."),
        microbatches: int = typer.Option(None, "--microbatches", min=1,
                                         help="The job's SMP microbatches, for the pipeline_bubble finding (default: "
                                              "as recorded in the profile)."),
        virtual_stages: int = typer.Option(None, "--virtual-stages", min=1,
                                           help="Pipeline stages per rank (an interleaved schedule's v), for the "
                                                "expected bubble (default: as recorded in the profile, else 1)."),
    ) -> None:
        """Analyse a profile: what to change (findings), GPU time and idle, kernels, launches, steps, precision,
        memory operations, annotations, CPU/GPU utilisation."""
        given = {"pipeline_parallel_degree": pipeline_parallel_degree, "microbatches": microbatches,
                 "virtual_stages": virtual_stages}
        context = {k: v for k, v in given.items() if v is not None}  # the rest: what the profile recorded
        code = analysis_commands().run_analyze(path, as_json, top, context)
        if code:
            raise typer.Exit(code)

    @app.command("diff")
    def diff_cmd(
        a: str = typer.Argument(..., help="The first profile (the baseline): a trace, a folder of ranks or a job's profiler output."),
        b: str = typer.Argument(..., help="The second profile, compared with the first."),
        as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
        top: int = typer.Option(15, "--top", min=1, help="How many annotations and kernels to list, largest change first."),
    ) -> None:
        """What got slower or faster from A to B: the step and its phases (per step), annotations and GPU kernels
        (counts and total time, as HTA's trace diff)."""
        code = analysis_commands().run_diff(a, b, as_json, top)
        if code:
            raise typer.Exit(code)

    # the dashboard, timeline and export commands
    from sagelaunch.profiler.cli_views import register  # lazy: cli_views imports Typer at its top; this module must not (fast_analyze runs without it)

    register(app)
    return app


def __getattr__(name: str):
    if name == "profile_app":  # `from sagelaunch.profiler.cli import profile_app` builds the Typer app on first use
        return _build_app()
    raise AttributeError(name)


def analysis_commands() -> ModuleType:
    """profiler/analysis_commands.py, what `profile analyze` and `profile diff` do; imported when one of them runs."""
    # The analysis does no linear algebra; OpenBLAS would start a thread per core as numpy loads (~0.06 s of a
    # 0.2 s command, measured on 2 cores). A caller's own setting wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from sagelaunch.profiler import analysis_commands as commands  # lazy: every sagelaunch command imports this module; only analyze and diff load the analysis (numpy, msgspec)

    return commands


def fast_analyze(argv: list[str]) -> bool:
    """Run `profile analyze PATH [--json] [--top N]` without Typer's argument processing, which imports pydantic
    and builds validators for every parameter (~0.1 s of the ~0.4 s this command takes on a 15 MB trace).

    Returns False, doing nothing, for any other command line (including --help and mistakes): Typer handles
    those. Called first by `sagelaunch`'s main() and by `python -m sagelaunch.profiler.cli`.
    """
    if argv[:2] != ["profile", "analyze"]:
        return False
    path, as_json, top = None, False, 10
    rest = iter(argv[2:])
    for arg in rest:
        if arg == "--json":
            as_json = True
        elif arg == "--top":
            value = next(rest, "")
            if not value.isdigit() or int(value) < 1:
                return False
            top = int(value)
        elif arg.startswith("-") or path is not None:
            return False
        else:
            path = arg
    if path is None:
        return False
    raise SystemExit(analysis_commands().run_analyze(path, as_json, top))


if __name__ == "__main__":
    import sys

    fast_analyze(["profile", *sys.argv[1:]])  # exits when it handled the command line
    _build_app()()
