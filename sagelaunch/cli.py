"""The `sagelaunch` command (also `python -m sagelaunch`). Each group lives in its own module; heavy imports
stay inside commands. The application layer: the only package that may import every other one."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=None)
def _app():
    """The Typer application with every group registered; built on first use, so that `sagelaunch profile
    analyze PATH --json` (profiler.cli.fast_analyze) runs without importing Typer (~0.1 s)."""
    import typer

    from sagelaunch.profiler.cli import profile_app
    from sagelaunch import cli_endpoints, cli_jobs, cli_package, cli_plan, cli_profile, cli_run, cli_validate

    app = typer.Typer(
        name="sagelaunch",
        help="Validate, run and inspect training jobs locally or on SageMaker.",
        no_args_is_help=True,
        add_completion=False,
    )
    cli_validate.register(app)
    cli_jobs.register(app)
    cli_package.register(app)
    cli_plan.register(app)
    cli_run.register(app)
    cli_endpoints.register(app)
    cli_profile.register(profile_app)
    app.add_typer(profile_app, name="profile", help="Analyse, report and browse profiles.")
    return app


def __getattr__(name: str):
    if name == "app":  # `from sagelaunch.cli import app`
        return _app()
    raise AttributeError(f"module 'sagelaunch.cli' has no attribute {name!r}")


def _one_line_warnings() -> None:
    """Warnings reach the terminal as `warning: <message>`, one line each, without Python's source-line echo."""
    import sys
    import warnings

    warnings.showwarning = lambda message, category, *_args, **_kw: print(f"warning: {message}", file=sys.stderr)


def main() -> None:
    import sys

    from sagelaunch.profiler.cli import fast_analyze

    _one_line_warnings()

    fast_analyze(sys.argv[1:])  # `profile analyze PATH --json` without Typer's parsing; exits when it ran
    _app()()


if __name__ == "__main__":
    main()
