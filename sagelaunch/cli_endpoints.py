"""`sagelaunch endpoints list|stop`: the local endpoints running on this machine (launcher.local.serving.endpoint_registry).

An endpoint started by Model/PyTorchModel.deploy(instance_type="local") ends with the process that deployed it; one
started detached (SAGELAUNCH_DETACH_ENDPOINTS=1) runs until `sagelaunch endpoints stop NAME`.
"""

from __future__ import annotations

import json
from dataclasses import asdict

import typer

from sagelaunch.cli_output import clear_errors, console
from sagelaunch.launcher import endpoint_registry

endpoints_app = typer.Typer(name="endpoints", help="List and stop local endpoints (deploy(instance_type='local')).",
                            no_args_is_help=True, add_completion=False)


@endpoints_app.command("list", help="Running local endpoints: name, URL, server pid and what ends it.")
def list_cmd(as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table.")) -> None:
    records = endpoint_registry.live_endpoints()
    if as_json:
        typer.echo(json.dumps([dict(asdict(r), detached=r.detached) for r in records], indent=2))
        return
    from rich.table import Column, Table

    table = Table(Column("Name", no_wrap=True), Column("URL", no_wrap=True), "PID", "Lifetime", "Model",
                  title=f"{len(records)} local endpoints")
    for r in records:
        table.add_row(r.name, r.url, str(r.pid), "detached" if r.detached else f"until pid {r.owner_pid} exits",
                      r.model_data)
    console().print(table)


@endpoints_app.command("stop", help="Stop a local endpoint and remove its temporary folder.")
def stop_cmd(name: str = typer.Argument(..., help="Endpoint name, as `sagelaunch endpoints list` shows it.")) -> None:
    with clear_errors():
        record = endpoint_registry.stop(name)
        console().print(f"Stopped {record.name} ({record.url}, pid {record.pid}).", markup=False)


def register(app: typer.Typer) -> None:
    app.add_typer(endpoints_app, name="endpoints")
