"""The `sagelaunch` command (also `python -m sagelaunch`). Each group lives in its own module; heavy imports
stay inside commands. The application layer: the only package that may import every other one."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="sagelaunch",
    help="Validate, run and inspect training jobs locally or on SageMaker.",
    no_args_is_help=True,
    add_completion=False,
)


def _register() -> None:
    from profiler.cli import profile_app
    from sagelaunch import cli_jobs, cli_package, cli_profile, cli_validate

    cli_validate.register(app)
    cli_jobs.register(app)
    cli_package.register(app)
    cli_profile.register(profile_app)
    app.add_typer(profile_app, name="profile", help="Analyse, report and browse profiles.")


_register()


def main() -> None:
    import sys

    from profiler.cli import fast_analyze

    fast_analyze(sys.argv[1:])  # `profile analyze PATH --json` without Typer's parsing; exits when it ran
    app()


if __name__ == "__main__":
    main()
