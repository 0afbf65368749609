"""The `sagelaunch` application: each command lives in its own module (sagelaunch/cli_*.py), imported only when that
command runs. `sagelaunch --help` lists the commands from the tables below without importing any, so the listing
and every command start with what they need alone (`validate` never loads the planner, `jobs list` never the
estimators). A module defines its command with `register(app)`, as it would on an ordinary Typer app."""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import Any, NamedTuple

import typer
from typer._click import Context  # Typer's own copy of click
from typer._click.exceptions import UsageError
from typer.core import TyperCommand, TyperGroup
from typer.main import get_group

from sagelaunch.jobspec.suggest import did_you_mean
from sagelaunch.profiler import cli as profiler_cli


class Lazy(NamedTuple):
    module: str  # sagelaunch.<module> registers the command
    summary: str  # the line the group's --help lists (tests/foundation/test_cli_commands.py: the command's own)


# in the order --help lists them (Typer's own order: commands, then groups)
COMMANDS = {
    "validate": Lazy("cli_validate", "Check JOB.yaml offline; --request prints the CreateTrainingJob request."),
    "fit": Lazy("cli_fit", "Run the job described by JOB.yaml (estimator fields + framework, inputs, job_name)."),
    "package": Lazy("cli_package", "Package a trained model for SageMaker serving: model files at the top, "
                                   "code/inference.py and code/requirements.txt beside them. Deploy it with "
                                   "Model(model_data=...).deploy(...)."),
    "plan": Lazy("cli_plan", "Will it fit? Memory per GPU, speed and cost of a model-parallel job, before anything is "
                             "paid for."),
    "run": Lazy("cli_run", "Run an SMP script under torchrun, outside a job (sagelaunch run --help)."),
    "jobs": Lazy("cli_jobs", "List, describe, follow and stop training jobs (local and SageMaker)."),
    "endpoints": Lazy("cli_endpoints", "List and stop local endpoints (deploy(instance_type='local'))."),
    "profile": Lazy("cli_profile", "Analyse, report and browse profiles."),
}
# `profile`'s own commands are the profiler's (profiler/cli.py); `ui` needs the web server and the job sources
PROFILE_COMMANDS = {
    "ui": Lazy("cli_profile_ui", "Browse profiles in a local, read-only web app on 127.0.0.1: a given profile/trace, "
                                 "and the profiled jobs (local registry and SageMaker)."),
}


@lru_cache(maxsize=None)
def load(module: str, name: str) -> Any:
    """The command `name` that sagelaunch.<module> registers (imported now, once)."""
    scratch = typer.Typer()
    importlib.import_module(f"sagelaunch.{module}").register(scratch)
    return get_group(scratch).commands[name]


class LazyGroup(TyperGroup):
    """A group with, after its registered commands, the commands of `lazy`: listed by their summary, imported when
    one runs."""

    lazy: dict[str, Lazy] = {}
    _listing = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.suggest_commands = False  # Typer would look among the registered commands only: see resolve_command

    def resolve_command(self, ctx: Context, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except UsageError as err:
            if args:
                err.message = err.message.rstrip(".") + (
                    did_you_mean(args[0], self.list_commands(ctx), n=3, form=". Did you mean {}?") or ".")
            raise

    def list_commands(self, ctx: Context) -> list[str]:
        return [*super().list_commands(ctx), *self.lazy]

    def get_command(self, ctx: Context, cmd_name: str) -> Any:
        entry = self.lazy.get(cmd_name)
        if entry is None:
            return super().get_command(ctx, cmd_name)
        if self._listing:  # a row of the help's table: the summary is all it shows
            return TyperCommand(cmd_name, help=entry.summary)
        return load(entry.module, cmd_name)

    def format_help(self, ctx: Context, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


class Commands(LazyGroup):
    lazy = COMMANDS


class ProfileCommands(LazyGroup):
    lazy = PROFILE_COMMANDS


profiler_cli.plain_help_types()  # the profiler's --help style for every command: no <bool>/<str> on flags and text
app = typer.Typer(cls=Commands, name="sagelaunch", no_args_is_help=True, add_completion=False)


@app.callback()
def sagelaunch() -> None:
    """Validate, run and inspect training jobs locally or on SageMaker."""
