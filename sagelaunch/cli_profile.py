"""`sagelaunch profile …`: the profiler's commands (profiler/cli.py) and `ui` (cli_profile_ui.py), which is imported
only when it runs: the web server and the job sources would slow every other profile command."""

from __future__ import annotations

import typer

from sagelaunch.cli_commands import COMMANDS, ProfileCommands
from sagelaunch.profiler.cli import profile_app


def register(app: typer.Typer) -> None:
    app.add_typer(profile_app, name="profile", help=COMMANDS["profile"].summary, cls=ProfileCommands)
