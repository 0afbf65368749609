"""`sagelaunch package MODEL_DIR -o model.tar.gz`: the SageMaker PyTorch inference layout."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from sagelaunch.launcher import archive_members, package_model


def package(
    model_dir: Path = typer.Argument(..., help="Model folder (the job's SM_MODEL_DIR output) or its model.tar.gz."),
    output: Path = typer.Option(Path("model.tar.gz"), "--output", "-o", help="Archive to write."),
    entry_point: Optional[Path] = typer.Option(
        None, "--entry-point", help="Inference handler to put in code/ (default: the sentiment handler)."),
    requirements: Optional[Path] = typer.Option(
        None, "--requirements", help="requirements.txt for code/ (default: transformers 4.x)."),
) -> None:
    """Package a trained model for SageMaker serving: model files at the top, code/inference.py and
    code/requirements.txt beside them. Deploy it with Model(model_data=...).deploy(...)."""
    from rich.console import Console
    from rich.markup import escape

    console, errors = Console(highlight=False), Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        with errors.status(f"packaging {model_dir}"):
            archive = package_model(model_dir, output, entry_point=entry_point, requirements=requirements)
    except (ValueError, OSError) as exc:
        errors.print(f"[red]error:[/red] {escape(str(exc))}")  # a member's name is no markup
        raise typer.Exit(1) from None
    members = archive_members(archive)
    size_mb = archive.stat().st_size / 1e6
    console.print(f"wrote {archive} ({size_mb:.1f} MB, {len(members)} files)")
    for name in members:
        console.print(f"  {name}")


def register(app: typer.Typer) -> None:
    app.command("package")(package)
